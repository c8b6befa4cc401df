// The database named by DATABASE_URL, behind one small interface that the pages use:
//
//   await db.one(sql, params)                    the first row as an array of its columns, or undefined
//   await db.all(sql, params)                    every row, each an array
//   await db.createPost(userId, body, createdAt) the author checked, then the INSERT, in one
//                                                transaction: the new post's id, or null when
//                                                there is no such user
//   await db.close()
//
//   sqlite:///relative.db, sqlite:////absolute.db   better-sqlite3, one connection per process
//   postgres://user@host:port/name                   pg, a pool of POOL connections (default 10)
//   mysql://user@host:port/name                      mysql2, a pool of POOL connections
//
// dbladder gives these forms (dbladder/app/environment.py), and never a password in the URL: it
// is in PGPASSWORD (which pg reads itself) or MYSQL_PWD (passed on to mysql2 here). A host that
// is a folder or a file, percent-encoded, is the server's Unix socket.

import { SQL } from "./queries.js";

const POOL = Number(process.env.POOL || 10);

export class UsageError extends Error {}

export async function openDatabase(databaseUrl) {
  if (!databaseUrl) {
    throw new UsageError("DATABASE_URL is not set: sqlite:///chirp.db, postgres://... or mysql://...");
  }
  const scheme = databaseUrl.split(":", 1)[0];
  if (scheme === "sqlite") return openSqlite(databaseUrl);
  const url = new URL(databaseUrl);
  const server = {
    host: decodeURIComponent(url.hostname) || "127.0.0.1",
    port: url.port ? Number(url.port) : undefined,
    user: decodeURIComponent(url.username),
    database: decodeURIComponent(url.pathname.slice(1)),
  };
  if (scheme === "postgres" || scheme === "postgresql") return openPostgres(server);
  if (scheme === "mysql" || scheme === "mariadb") return openMariadb(server);
  throw new UsageError(`DATABASE_URL: unknown scheme ${scheme}:// (sqlite, postgres or mysql)`);
}

// SQLite: dbladder's defaults, those of "Postgres vs SQLite under load": WAL, a write acknowledged
// only once it is on the disk (synchronous=FULL), 5 s of waiting for the write lock, a 10 MB cache.
// better-sqlite3 is synchronous: a query runs to its end on the event loop, as in the post's app.
async function openSqlite(databaseUrl) {
  // Only the driver of the engine in use is loaded.
  const { default: Database } = await import("better-sqlite3");
  const path = decodeURIComponent(databaseUrl.slice("sqlite:///".length).split("?", 1)[0]);
  const db = new Database(path, { fileMustExist: true });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  db.pragma("cache_size = -10240");
  const statements = new Map();
  const prepared = (sql) => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql).raw(true);
      statements.set(sql, statement);
    }
    return statement;
  };
  const insertPost = db.transaction((userId, body, createdAt) => {
    if (prepared(SQL.USER_EXISTS).get(userId) === undefined) return null;
    return prepared(SQL.INSERT_POST).get(userId, body, createdAt)[0];
  });
  return {
    engine: "sqlite",
    one: async (sql, params) => prepared(sql).get(...params),
    all: async (sql, params) => prepared(sql).all(...params),
    // BEGIN IMMEDIATE, as dbladder's engine: a transaction that reads before it writes takes the
    // write lock up front, so it waits (busy_timeout) instead of failing when another process
    // wrote after its read.
    createPost: async (userId, body, createdAt) => insertPost.immediate(userId, body, createdAt),
    close: async () => db.close(),
  };
}

async function openPostgres(server) {
  const { default: pg } = await import("pg");
  // count(*) and bigint columns come back as numbers, not strings (ids stay below 2^53).
  pg.types.setTypeParser(pg.types.builtins.INT8, Number);
  const pool = new pg.Pool({ ...server, max: POOL });
  const names = new Map();
  // Each statement is named, so pg prepares it once per connection, as dbladder's asyncpg does.
  const query = (client, sql, params) => {
    let name = names.get(sql);
    if (name === undefined) {
      name = `chirp_${names.size}`;
      names.set(sql, name);
    }
    return client.query({ name, text: numbered(sql), values: params, rowMode: "array" });
  };
  return {
    engine: "postgresql",
    one: async (sql, params) => (await query(pool, sql, params)).rows[0],
    all: async (sql, params) => (await query(pool, sql, params)).rows,
    createPost: async (userId, body, createdAt) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        if ((await query(client, SQL.USER_EXISTS, [userId])).rows.length === 0) {
          await client.query("ROLLBACK");
          return null;
        }
        const id = (await query(client, SQL.INSERT_POST, [userId, body, createdAt])).rows[0][0];
        await client.query("COMMIT");
        return id;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

function numbered(sql) {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

async function openMariadb(server) {
  const { default: mysql } = await import("mysql2/promise");
  const where = server.host.startsWith("/") ? { socketPath: server.host } : { host: server.host, port: server.port };
  const pool = mysql.createPool({
    ...where,
    user: server.user,
    password: process.env.MYSQL_PWD || undefined,
    database: server.database,
    connectionLimit: POOL,
    charset: "utf8mb4",
    rowsAsArray: true,
  });
  // Read committed, as dbladder's MariaDB engine sets for its own connections.
  pool.pool.on("connection", (connection) => {
    connection.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  });
  // execute() prepares each statement on the server once per connection (the binary protocol),
  // as dbladder's asyncmy does.
  return {
    engine: "mariadb",
    one: async (sql, params) => (await pool.execute(sql, params))[0][0],
    all: async (sql, params) => (await pool.execute(sql, params))[0],
    createPost: async (userId, body, createdAt) => {
      const connection = await pool.getConnection();
      try {
        await connection.beginTransaction();
        if ((await connection.execute(SQL.USER_EXISTS, [userId]))[0].length === 0) {
          await connection.rollback();
          return null;
        }
        const id = (await connection.execute(SQL.INSERT_POST, [userId, body, createdAt]))[0][0][0];
        await connection.commit();
        return id;
      } catch (error) {
        await connection.rollback().catch(() => {});
        throw error;
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}
