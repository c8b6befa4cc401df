"""Database URLs: one parser for every engine.

    sqlite:///relative/shop.db          a file relative to the current folder
    sqlite:////abs/path/shop.db         an absolute path (four slashes, as SQLAlchemy writes it)
    postgresql://user@127.0.0.1:5432/db TCP
    postgresql:///db?host=/var/run/postgresql
                                        Unix socket (host names a folder)
    mariadb://root@127.0.0.1:3306/test  TCP (mysql:// is accepted too)
    mariadb://root@localhost/test?unix_socket=/run/mysqld/mysqld.sock

Query parameters that the engine does not use for connecting are its settings (for SQLite,
`?journal_mode=DELETE&synchronous=NORMAL`); each engine validates its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from .errors import BadURL, UnknownEngine

# Scheme -> engine name. Aliases are accepted so that URLs copied from other tools work.
SCHEMES = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "mariadb": "mariadb",
    "mysql": "mariadb",
}


@dataclass(frozen=True)
class DatabaseURL:
    """A parsed database URL. `params` holds the query string, in order, as text."""

    raw: str
    engine: str
    user: str | None = None
    password: str | None = None
    host: str | None = None
    port: int | None = None
    database: str | None = None
    path: str | None = None  # SQLite only: the file path as written
    params: dict[str, str] = field(default_factory=dict)

    @property
    def redacted(self) -> str:
        """The URL as given, with any password replaced, safe to print and save."""
        if not self.password:
            return self.raw
        return self.raw.replace(":" + self.password + "@", ":***@", 1)

    def with_database(self, name: str) -> DatabaseURL:
        """The same server with another database name (for servers; tests use it)."""
        if self.engine == "sqlite":
            raise BadURL("a SQLite URL names a file, not a database on a server")
        raw = self.raw
        if self.database:
            head, _, tail = raw.partition("?")
            head = head[: len(head) - len(self.database)] + name
            raw = head + ("?" + tail if tail else "")
        else:
            head, sep, tail = raw.partition("?")
            raw = head.rstrip("/") + "/" + name + (sep + tail if sep else "")
        return parse_url(raw)


def parse_url(raw: str) -> DatabaseURL:
    """Parse a database URL, or raise `BadURL` / `UnknownEngine` with a message that says why."""
    if not raw or "://" not in raw:
        raise BadURL(
            f"not a database URL: {raw!r}; expected e.g. sqlite:///shop.db, "
            "postgresql://user@127.0.0.1:5432/db or mariadb://root@127.0.0.1:3306/test"
        )
    scheme = raw.split("://", 1)[0].lower()
    engine = SCHEMES.get(scheme)
    if engine is None:
        known = ", ".join(sorted(SCHEMES))
        raise UnknownEngine(f"unknown database engine {scheme!r} in {raw!r}; known schemes: {known}")
    parts = urlsplit(raw)
    try:
        params = dict(parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query)))
    except ValueError as exc:
        raise BadURL(f"cannot read the query string of {raw!r}: {exc}") from None
    if engine == "sqlite":
        # sqlite:///x.db -> netloc "" and path "/x.db" (relative); sqlite:////x.db -> "//x.db" (absolute)
        if parts.netloc:
            raise BadURL(
                f"a SQLite URL has no host: {raw!r}; write sqlite:///relative.db or sqlite:////abs/path.db"
            )
        path = unquote(parts.path)[1:] if parts.path.startswith("/") else unquote(parts.path)
        if not path or path.endswith("/"):
            raise BadURL(f"a SQLite URL must name a file: {raw!r}, e.g. sqlite:///shop.db")
        return DatabaseURL(raw=raw, engine=engine, path=path, params=params)
    try:
        port = parts.port
    except ValueError:
        raise BadURL(f"the port in {raw!r} is not a number from 1 to 65535") from None
    database = unquote(parts.path.lstrip("/")) or None
    if database and "/" in database:
        raise BadURL(f"a database name cannot contain '/': {raw!r}")
    return DatabaseURL(
        raw=raw,
        engine=engine,
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        host=parts.hostname,
        port=port,
        database=database,
        params=params,
    )
