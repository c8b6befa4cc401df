"""A request file's templates: the `{name}`s they use, a JSON body filled in, and headers checked
and layered (the file's, the request's, the session's), one place for the request and the login.

`{session}` (the session's number) and `{host}` (the address dbladder sends to, 127.0.0.1:PORT)
are dbladder's own; every other name is one of the request's parameters.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

SESSION_FIELD = "session"  # {session}: the number of the session a request goes on
HOST_FIELD = "host"  # {host}: the address dbladder sends to, 127.0.0.1:PORT
OWN_FIELDS = (SESSION_FIELD, HOST_FIELD)
# Headers the load's client writes itself: the body's length, and one connection kept per client.
CLIENT_HEADERS = ("content-length", "transfer-encoding", "connection")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_FORMATTER = string.Formatter()


def merge_headers(first: Mapping[str, str], then: Mapping[str, str], keep: bool = False) -> dict[str, str]:
    """`first`'s headers with `then`'s, which replace one of the same name in any case (`keep`:
    `first`'s stay, `then`'s come only where `first` has none); two Cookie headers join into one.
    A header stays where it was first given."""
    merged = dict(first)
    names = {name.lower(): name for name in merged}
    for name, value in then.items():
        known = names.get(name.lower())
        if known is None:
            merged[name] = value
            names[name.lower()] = name
        elif name.lower() == "cookie":
            merged[known] = f"{merged[known]}; {value}"
        elif not keep:
            merged[known] = value
    return merged


def template_names(text: str) -> set[str]:
    """The `{name}`s of a template; ValueError for one that is not a template."""
    return {name for _, name, _, _ in _FORMATTER.parse(text) if name is not None}


def header_problems(headers: Mapping[str, str], names: Sequence[str] | None = None) -> list[str]:
    """What is wrong with headers to send, each a phrase; `names`: the only `{name}`s they may use."""
    found = []
    for name, value in headers.items():
        if not (isinstance(name, str) and _HEADER_NAME.match(name)):
            found.append(f"{name!r} is not a header's name")
        elif name.lower() in CLIENT_HEADERS:
            found.append(f"the header {name} is the load's client's to send")
        elif not isinstance(value, str) or "\r" in value or "\n" in value:
            found.append(f"the header {name}'s value must be text on one line, not {value!r}")
        elif names is not None:
            try:
                unknown = sorted(template_names(value) - set(names))
            except ValueError as exc:
                found.append(f"template {value!r}: {exc}")
                continue
            found.extend(
                f"the header {name}: {{{field}}} is not one of {', '.join(f'{{{n}}}' for n in names)}"
                for field in unknown
            )
    return found


def json_strings(node: Any) -> list[str]:
    """Every string of a JSON body template, keys aside."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, Mapping):
        return [text for value in node.values() for text in json_strings(value)]
    if isinstance(node, (list, tuple)):
        return [text for value in node for text in json_strings(value)]
    return []


def fill_json(template: Any, values: Mapping[str, Any]) -> str:
    """The JSON body with `{name}` strings replaced: a template that is only `{name}` keeps the
    value's own type (a number stays a number), others are formatted as text."""

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            whole = re.fullmatch(r"\{(\w+)\}", node)
            return values[whole.group(1)] if whole else node.format_map(values)
        if isinstance(node, Mapping):
            return {key: fill(value) for key, value in node.items()}
        if isinstance(node, (list, tuple)):
            return [fill(value) for value in node]
        return node

    return json.dumps(fill(template))
