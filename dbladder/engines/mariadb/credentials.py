"""Where MariaDB's password comes from when the URL has none: as the mariadb client finds it.

The client groups of ~/.my.cnf come first, then MYSQL_PWD (tested against the client of MariaDB
10.11: the option file wins); the option file's `user` applies when the URL names none. The
engine's registration names `with_password` as its `credentials`, which `dbladder.urls.with_password`
calls for every MariaDB URL without a password (docs/engines.md, "Passwords").
"""

from __future__ import annotations

import dataclasses
import stat
from collections.abc import Mapping
from pathlib import Path

from ...errors import BadURL
from ...urls import DatabaseURL

OPTION_FILE = ".my.cnf"
# The groups the mariadb command-line client reads (`mariadb --help`); [mariadb] is the server's.
CLIENT_GROUPS = ("client", "client-server", "client-mariadb", "mysql", "mariadb-client")
# Escapes in an option file's values (MariaDB's "Configuring MariaDB with Option Files").
OPTION_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "r": "\r", "s": " ", "\\": "\\", "'": "'", '"': '"'}


def with_password(url: DatabaseURL, environ: Mapping[str, str]) -> DatabaseURL:
    """`url` (which has no password) with the one the mariadb client would use, and the option
    file's user when the URL names none; as it is when there is none."""
    home = environ.get("HOME") or str(Path.home())
    options = read_option_file(Path(home) / OPTION_FILE)
    user = url.user or options.get("user")
    if "password" in options:
        return dataclasses.replace(
            url, user=user, password=options["password"], password_source=f"~/{OPTION_FILE}"
        )
    url = dataclasses.replace(url, user=user)
    variable = url.kind.password_variable
    if variable is not None and variable in environ:
        return dataclasses.replace(url, password=environ[variable], password_source=variable)
    return url


def read_option_file(path: Path) -> dict[str, str]:
    """`user` and `password` from the client groups of a MariaDB option file, the last one in the
    file winning, as the mariadb client reads them; {} when the file is missing or unreadable,
    and when anyone may write it (MariaDB ignores such a file too).

    Read line by line rather than with configparser (or asyncmy's reader, which is configparser):
    configparser takes an indented line for the continuation of the value above and merges a
    group that appears twice, so it would not find the value the client takes.
    """
    try:
        if path.stat().st_mode & stat.S_IWOTH:
            return {}
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}
    group = None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] in "#;!":  # a comment, or !include / !includedir
            continue
        if line.startswith("["):
            if not line.endswith("]"):  # the mariadb client stops here too
                raise BadURL(f"cannot read the MariaDB option file {path}: line {number} is not a [group]")
            group = line[1:-1].strip().lower()
            continue
        key, equals, value = line.partition("=")
        # `password` alone, without a value, makes the client ask for one: nothing to take.
        if group in CLIENT_GROUPS and equals and key.strip() in ("user", "password"):
            found[key.strip()] = _option_value(value)
    return found


def _option_value(raw: str) -> str:
    """An option file's value as the mariadb client reads it (tested): a quoted value is what is
    inside the quotes; else a `#` anywhere starts a comment. Escapes are read in both."""
    raw = raw.strip()
    if raw[:1] in ("'", '"') and raw.find(raw[0], 1) != -1:
        raw = raw[1 : raw.find(raw[0], 1)]
    else:
        raw = raw.partition("#")[0].rstrip()
    out = []
    chars = iter(raw)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(OPTION_ESCAPES.get(following, "\\" + following))
        else:
            out.append(char)
    return "".join(out)
