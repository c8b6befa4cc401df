"""A small real web app for the request-file tests: a login with a CSRF cookie, as Django does,
and a form POST that writes a row of a real SQLite file and redirects to it."""

import http.cookies
import http.server
import os
import secrets
import sqlite3
import sys
import threading
from urllib.parse import parse_qs

DB = os.environ["DBLADDER_DB_PATH"]
SESSIONS: set[str] = set()
LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def cookies(self):
        jar = http.cookies.SimpleCookie(self.headers.get("Cookie", ""))
        return {name: morsel.value for name, morsel in jar.items()}

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def form(self):
        length = int(self.headers.get("Content-Length", "0"))
        return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

    def do_GET(self):
        if self.path == "/login":
            token = secrets.token_hex(8)
            return self.answer(200, b"<form>", [("Set-Cookie", f"csrftoken={token}; Path=/")])
        if self.path.startswith("/items/"):
            with sqlite3.connect(DB) as db:
                row = db.execute(
                    "SELECT title FROM items WHERE id = ?", (self.path.split("/")[2],)
                ).fetchone()
            return self.answer(200 if row else 404, (row[0] if row else "no such item").encode())
        return self.answer(200, b"home")

    def do_POST(self):
        cookies, form = self.cookies(), self.form()
        token = form.get("csrfmiddlewaretoken")
        if not token or token != cookies.get("csrftoken"):
            return self.answer(403, b"CSRF verification failed. Request aborted.")
        if self.path == "/login":
            if form.get("password") != "pw":
                return self.answer(200, b"Please enter a correct username and password.")
            session = secrets.token_hex(8)
            SESSIONS.add(session)
            return self.answer(302, headers=[("Location", "/"), ("Set-Cookie", f"sessionid={session}")])
        if cookies.get("sessionid") not in SESSIONS:
            return self.answer(302, headers=[("Location", "/login")])
        with LOCK, sqlite3.connect(DB) as db:
            new = db.execute("INSERT INTO items (title) VALUES (?)", (form["title"],)).lastrowid
        return self.answer(302, headers=[("Location", f"/items/{new}/")])

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    if sys.argv[1] == "setup":
        with sqlite3.connect(DB) as db:
            db.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            db.executemany("INSERT INTO items (title) VALUES (?)", [("first",), ("second",)])
    else:
        http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
