// Chirp, the social app of "SQLite handled 315 million daily requests on a laptop", as a small
// Node app: node:http and one driver per engine, nothing else. Its pages answer as dbladder's own
// chirp service does (dbladder/workloads/chirp/endpoints.py), from the same SQL (queries.js):
//
//   GET  /                   {"app": "chirp", "engine": ...}: the ready path
//   GET  /post/:id           a post with its author's handle and like count; 404 if there is none
//   GET  /u/:handle          {"user": ..., "posts": [its 20 newest]}; 404 if there is none
//   GET  /timeline/:user_id  the 20 newest posts of the people the user follows (empty for none)
//   POST /post               {"user_id": N, "body": "..."} -> 201 {"id", "user_id", "created_at"}
//
//   DATABASE_URL=sqlite:///chirp.db PORT=8000 node server.js     (or: node server.js 8000)
//
// WORKERS=N runs N processes on the one port (node:cluster; default 1); POOL=N connections per
// process to a server (default 10). It listens on 127.0.0.1 only.

import cluster from "node:cluster";
import http from "node:http";

import { openDatabase, UsageError } from "./database.js";
import { POST_FIELDS, SQL, USER_FIELDS, USER_POST_FIELDS } from "./queries.js";

const HANDLE = /^[A-Za-z0-9_]{1,32}$/;
const ID = /^[1-9][0-9]{0,15}$/; // within Number.MAX_SAFE_INTEGER's 16 digits, checked below
const BODY_LENGTH = 280;
const MAX_REQUEST_BODY = 16 * 1024;

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const fields = (names, row) => Object.fromEntries(names.map((name, i) => [name, row[i]]));

function parseId(text, what) {
  const id = ID.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) throw new HttpError(400, `${what} must be a positive integer, not ${JSON.stringify(text.slice(0, 40))}`);
  return id;
}

async function postById(db, id) {
  const row = await db.one(SQL.POST_BY_ID, [id]);
  if (row === undefined) throw new HttpError(404, `no post with id ${id}`);
  return [200, fields(POST_FIELDS, row)];
}

async function profile(db, handle) {
  if (!HANDLE.test(handle)) throw new HttpError(400, `a handle is 1 to 32 letters, digits or underscores, not ${JSON.stringify(handle.slice(0, 40))}`);
  const user = await db.one(SQL.USER_BY_HANDLE, [handle]);
  if (user === undefined) throw new HttpError(404, `no user with handle ${JSON.stringify(handle)}`);
  const posts = await db.all(SQL.USER_POSTS, [user[0]]);
  return [200, { user: fields(USER_FIELDS, user), posts: posts.map((post) => fields(USER_POST_FIELDS, post)) }];
}

async function timeline(db, userId) {
  const rows = await db.all(SQL.TIMELINE, [userId]);
  return [200, rows.map((row) => fields(POST_FIELDS, row))];
}

async function createPost(db, body) {
  let post;
  try {
    post = JSON.parse(body);
  } catch {
    throw new HttpError(400, "the body must be JSON: {\"user_id\": N, \"body\": \"...\"}");
  }
  const userId = post?.user_id;
  const text = post?.body;
  if (!Number.isSafeInteger(userId) || userId < 1) throw new HttpError(400, "user_id must be a positive integer");
  if (typeof text !== "string" || text.length < 1 || text.length > BODY_LENGTH) {
    throw new HttpError(400, `body must be text of 1 to ${BODY_LENGTH} characters`);
  }
  const createdAt = Math.floor(Date.now() / 1000);
  const id = await db.createPost(userId, text, createdAt);
  if (id === null) throw new HttpError(404, `no user with id ${userId}`);
  return [201, { id, user_id: userId, created_at: createdAt }];
}

function route(db, method, path, body) {
  const [, first, second, extra] = path.split("/");
  if (path === "/" && method === "GET") return [200, { app: "chirp", engine: db.engine }];
  if (extra === undefined && second !== undefined) {
    const value = decodeURIComponent(second);
    if (method === "GET" && first === "post") return postById(db, parseId(value, "the post id"));
    if (method === "GET" && first === "u") return profile(db, value);
    if (method === "GET" && first === "timeline") return timeline(db, parseId(value, "the user id"));
  }
  if (path === "/post" && method === "POST") return createPost(db, body);
  throw new HttpError(404, `no page ${method} ${path}`);
}

function serve(db, port) {
  const server = http.createServer((request, response) => {
    const chunks = [];
    let size = 0;
    request.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BODY) chunks.push(chunk);
    });
    request.on("end", async () => {
      let status;
      let answer;
      try {
        if (size > MAX_REQUEST_BODY) throw new HttpError(413, `a request body is at most ${MAX_REQUEST_BODY} bytes`);
        const path = request.url.split("?", 1)[0];
        [status, answer] = await route(db, request.method, path, Buffer.concat(chunks).toString());
      } catch (error) {
        if (error instanceof HttpError) {
          [status, answer] = [error.status, { error: error.message }];
        } else if (error instanceof URIError) {
          [status, answer] = [400, { error: `the path is not percent-encoded text: ${request.url.slice(0, 80)}` }];
        } else {
          console.error(`${request.method} ${request.url}: ${error.stack || error}`);
          [status, answer] = [500, { error: "the database failed; the app's log says how" }];
        }
      }
      const text = JSON.stringify(answer);
      response.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      response.end(text);
    });
  });
  // dbladder's load keeps its connections open between levels and rests 2 s after a probe: idle
  // connections are kept well past that (Node closes them after 5 s by default, and a request
  // sent as it closes one is lost).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(port, "127.0.0.1", () => {
    console.log(`chirp (pid ${process.pid}) listening on 127.0.0.1:${port}, ${db.engine}`);
  });
  const stop = () => server.close(() => db.close().finally(() => process.exit(0)));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

async function main() {
  const port = Number(process.argv[2] || process.env.PORT || 8000);
  const workers = Number(process.env.WORKERS || 1);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`the port must be 1 to 65535, not ${process.argv[2] || process.env.PORT}`);
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError(`WORKERS must be 1 or more, not ${process.env.WORKERS}`);
  if (workers > 1 && cluster.isPrimary) {
    for (let i = 0; i < workers; i++) cluster.fork();
    // A worker that dies takes the app down with it: a measurement must not go on with fewer.
    cluster.on("exit", (worker, code, signal) => {
      console.error(`chirp worker ${worker.process.pid} exited (${signal || code}); stopping`);
      process.exit(1);
    });
    const stop = () => {
      cluster.removeAllListeners("exit");
      for (const worker of Object.values(cluster.workers)) worker.kill("SIGTERM");
      process.exit(0);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
    return;
  }
  serve(await openDatabase(process.env.DATABASE_URL), port);
}

main().catch((error) => {
  console.error(`chirp: ${error.message}`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
