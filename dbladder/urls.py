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

A password never has to be written on a command line (where `ps` and the shell's history show
it). `resolve_url` finds the URL and its password the way the command line does:

* the URL: `--db URL`; else the environment variable DBLADDER_DB_URL; else the default. Either
  may be `@path`: the URL is then read from that file (its first line that is not blank or a
  `#` comment; `~` is expanded), which can be kept readable only by its owner.
* the password, when the URL has none: what the engine's own command-line client would use.
  PostgreSQL (as psql): PGPASSWORD, else ~/.pgpass (or PGPASSFILE), which asyncpg reads itself
  at connect time. MariaDB (as the mariadb client; tested, the option file comes first): the
  last `password` in the client groups of ~/.my.cnf, else MYSQL_PWD; a `user` there is taken
  when the URL names none.

`create_engine` does the same for a URL given as text, so every process of a run finds the
password in its own environment and no configuration has to carry it. A password, however it
came, never shows in `DatabaseURL.redacted`, in repr(), or in an error message.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from .errors import BadURL

if TYPE_CHECKING:
    from .engine_registry import EngineKind

# The engine registry (dbladder.engine_registry) is imported where a URL is first parsed, not with
# this module: the command line imports this module at start-up, before it knows it needs an engine.

DB_URL_ENV = "DBLADDER_DB_URL"
# A password in a query string: refused by parse_url, and hidden by redact() meanwhile.
QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


@dataclass(frozen=True)
class DatabaseURL:
    """A parsed database URL. `params` holds the query string, in order, as text.

    `raw` (which can hold the password) and `password` are left out of repr(); print `redacted`.
    """

    raw: str = field(repr=False)
    engine: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    host: str | None = None
    port: int | None = None
    database: str | None = None
    path: str | None = None  # SQLite only: the file path as written
    params: dict[str, str] = field(default_factory=dict)
    # Where the password came from, for messages: "the URL", "PGPASSWORD", "~/.my.cnf" ...
    password_source: str | None = None

    @property
    def kind(self) -> EngineKind:
        """The kind of engine the URL names: its label, whether it runs in-process or has a server,
        and where its parts are (`dbladder.engine_registry`)."""
        from .engine_registry import engine_kind

        return engine_kind(self.engine)

    @property
    def redacted(self) -> str:
        """The URL as given, with any password replaced, safe to print and save."""
        return redact(self.raw)

    def with_database(self, name: str) -> DatabaseURL:
        """The same server with another database name (for servers; tests use it)."""
        if self.kind.in_process:
            raise BadURL(f"a {self.kind.label} URL names a file, not a database on a server")
        raw = self.raw
        if self.database:
            head, _, tail = raw.partition("?")
            head = head[: len(head) - len(self.database)] + name
            raw = head + ("?" + tail if tail else "")
        else:
            head, sep, tail = raw.partition("?")
            raw = head.rstrip("/") + "/" + name + (sep + tail if sep else "")
        other = parse_url(raw)
        if other.password is None and self.password is not None:  # from the environment or a file
            other = dataclasses.replace(other, password=self.password, password_source=self.password_source)
        return other

    def with_host(self, host: str, port: int | None, params: Mapping[str, str]) -> DatabaseURL:
        """The same database on the same server by another address: `host` (may be empty), `port`
        (None: the engine's default) and query string; user, password and database kept.

        Only a password written in the URL goes into the new one: one from the environment or a
        file is found there again by every process that opens the URL (`with_password`).
        """
        user = quote(self.user or "", safe="")
        if self.password and self.password_source == "the URL":
            user += ":" + quote(self.password, safe="")
        at = user + "@" if user else ""
        where = host + (f":{port}" if port else "")
        query = "?" + urlencode(dict(params), safe="/") if params else ""
        scheme = self.raw.split("://", 1)[0]
        return parse_url(f"{scheme}://{at}{where}/{quote(self.database or '', safe='')}{query}")


def redact(raw: str) -> str:
    """`raw` with the password of its `user:password@` part replaced by ***; works on text that
    does not parse, so error messages can quote what was given."""
    scheme, sep, rest = raw.partition("://")
    if not sep:
        return raw
    end = min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))
    userinfo, at, hostport = rest[:end].rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.split(':', 1)[0]}:***@{hostport}{rest[end:]}"
    # parse_url refuses a password in the query string, and its message must not show it either.
    return scheme + "://" + QUERY_PASSWORD.sub(r"\1***", rest)


def parse_url(raw: str) -> DatabaseURL:
    """Parse a database URL, or raise `BadURL` / `UnknownEngine` with a message that says why.

    Nothing but the text is read: `resolve_url` adds a password from the environment or a file.
    """
    shown = redact(raw)  # error messages quote the URL without its password
    if not raw or "://" not in raw:
        raise BadURL(
            f"not a database URL: {shown!r}; expected e.g. sqlite:///shop.db, "
            "postgresql://user@127.0.0.1:5432/db or mariadb://root@127.0.0.1:3306/test"
        )
    from .engine_registry import kind_of_scheme

    scheme = raw.split("://", 1)[0].lower()
    kind = kind_of_scheme(scheme, shown)
    engine = kind.name
    parts = urlsplit(raw)
    try:
        params = dict(parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query)))
    except ValueError:
        raise BadURL(f"cannot read the query string of {shown!r}") from None
    if any(key.lower() == "password" for key in params):
        variable = kind.password_variable or "the URL's user:password@ part"
        raise BadURL(
            f"a password in the query string is not read ({shown!r}); give it in {variable}, "
            "not on the command line"
        )
    if kind.in_process:
        # An in-process engine's URL names its file. sqlite:///x.db -> netloc "" and path "/x.db"
        # (relative); sqlite:////x.db -> "//x.db" (absolute).
        if parts.netloc:
            raise BadURL(
                f"a {kind.label} URL has no host: {shown!r}; "
                f"write {scheme}:///relative.db or {scheme}:////abs/path.db"
            )
        path = unquote(parts.path)[1:] if parts.path.startswith("/") else unquote(parts.path)
        if not path or path.endswith("/"):
            raise BadURL(f"a {kind.label} URL must name a file: {shown!r}, e.g. {scheme}:///shop.db")
        return DatabaseURL(raw=raw, engine=engine, path=path, params=params)
    try:
        port = parts.port
    except ValueError:
        raise BadURL(f"the port in {shown!r} is not a number from 1 to 65535") from None
    database = unquote(parts.path.lstrip("/")) or None
    if database and "/" in database:
        raise BadURL(f"a database name cannot contain '/': {shown!r}")
    password = unquote(parts.password) if parts.password else None
    return DatabaseURL(
        raw=raw,
        engine=engine,
        user=unquote(parts.username) if parts.username else None,
        password=password,
        host=parts.hostname,
        port=port,
        database=database,
        params=params,
        password_source="the URL" if password is not None else None,
    )


def resolve_url(
    given: str | None, environ: Mapping[str, str] | None = None, *, default: str | None = None
) -> DatabaseURL:
    """The database a command means, with its password: `url_text` picks the URL, `with_password`
    adds the password when the URL has none. `environ` defaults to the process's environment."""
    environ = os.environ if environ is None else environ
    return with_password(parse_url(url_text(given, environ, default=default)), environ)


def url_text(given: str | None, environ: Mapping[str, str], *, default: str | None = None) -> str:
    """The URL as text: `given` (the --db option), else DBLADDER_DB_URL, else `default`.

    `@path` stands for the URL written in that file, so a URL with a password needs neither the
    command line nor the environment. BadURL when there is none, or the file cannot be read.
    """
    text = given or environ.get(DB_URL_ENV) or default
    if not text:
        raise BadURL(f"no database given: pass --db URL or set {DB_URL_ENV}")
    text = text.strip()
    if text.startswith("@"):
        return read_url_file(Path(text[1:]).expanduser())
    return text


def read_url_file(path: Path) -> str:
    """The URL in a file: its first line that is not blank or a `#` comment, stripped.

    Messages name the file, never its content (which may hold a password).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise BadURL(f"no file {path} to read the database URL from (--db @{path})") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise BadURL(f"cannot read the database URL from {path}: {reason}") from None
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    raise BadURL(f"{path} holds no database URL (only blank lines and # comments)")


def with_password(url: DatabaseURL, environ: Mapping[str, str]) -> DatabaseURL:
    """`url` with the password its engine's own client would use when the URL gives none.

    The engine's registration says where: its `credentials` (MariaDB: the client groups of
    ~/.my.cnf, then MYSQL_PWD, as the mariadb client reads them), else its `password_variable`
    (PostgreSQL: PGPASSWORD; ~/.pgpass is left to asyncpg, which reads it when no password is
    given). SQLite has no password.
    """
    if url.password is not None:
        return url
    kind = url.kind
    if kind.credentials is not None:
        from .engine_registry import load

        found: DatabaseURL = load(kind.credentials)(url, environ)
        return found
    variable = kind.password_variable
    if variable is not None and variable in environ:
        return dataclasses.replace(url, password=environ[variable], password_source=variable)
    return url


def is_loopback(host: str) -> bool:
    """Whether a host name or address is this machine's loopback ("localhost", 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_this_machine(host: str) -> bool | None:
    """Whether `host` is this machine (loopback, or an address one of its interfaces has: a socket
    can bind to it, and nothing is sent); None when it does not resolve here."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return None
    for family, _, _, _, address in found:
        if ipaddress.ip_address(str(address[0]).split("%")[0]).is_loopback:
            return True
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((address[0], 0))
            except OSError:
                continue
            return True
    return False
