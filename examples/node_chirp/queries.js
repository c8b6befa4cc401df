// Chirp's SQL, the same statements dbladder's own chirp workload sends
// (dbladder/workloads/chirp/operations.py), so that a figure of this app and one of dbladder's
// service on the same data differ by the app, not by the queries. Written once with `?`;
// database.js turns them into PostgreSQL's $1, $2, ... A test compares them with the Python ones.

export const PAGE = 20;

export const SQL = Object.freeze({
  POST_BY_ID:
    "SELECT p.id, p.user_id, u.handle, p.body, p.created_at, " +
    "(SELECT count(*) FROM likes l WHERE l.post_id = p.id) " +
    "FROM posts p JOIN users u ON u.id = p.user_id WHERE p.id = ?",
  USER_BY_HANDLE: "SELECT id, handle, name, bio, created_at FROM users WHERE handle = ?",
  USER_POSTS:
    `SELECT id, body, created_at FROM posts WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
  // The timeline's inner query picks the 20 ids from the index on posts (user_id, created_at, id)
  // alone; only those 20 posts are then read (docs/chirp.md has the plans on all three engines).
  TIMELINE:
    "SELECT p.id, p.user_id, u.handle, p.body, p.created_at, " +
    "(SELECT count(*) FROM likes l WHERE l.post_id = p.id) " +
    "FROM (SELECT fp.id FROM follows f JOIN posts fp ON fp.user_id = f.followee_id " +
    `WHERE f.follower_id = ? ORDER BY fp.created_at DESC, fp.id DESC LIMIT ${PAGE}) t ` +
    "JOIN posts p ON p.id = t.id JOIN users u ON u.id = p.user_id " +
    "ORDER BY p.created_at DESC, p.id DESC",
  USER_EXISTS: "SELECT 1 FROM users WHERE id = ?",
  INSERT_POST: "INSERT INTO posts (user_id, body, created_at) VALUES (?, ?, ?) RETURNING id",
});

// The field names of each answer, in the order of the SELECT's columns, as dbladder's service
// answers them.
export const POST_FIELDS = ["id", "user_id", "handle", "body", "created_at", "likes"];
export const USER_FIELDS = ["id", "handle", "name", "bio", "created_at"];
export const USER_POST_FIELDS = ["id", "body", "created_at"];
