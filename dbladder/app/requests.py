"""What to send to the user's app: a request file (`--requests FILE.py`), in Python like a workload file.

    from dbladder.app.requests import Acknowledge, Csrf, Invariant, Login, Param, Request, Requests

    requests = Requests(
        login=Login("/accounts/login/", form={"username": "user{session}", "password": "pw"},
                    csrf=Csrf.cookie("csrftoken", field="csrfmiddlewaretoken")),
        sessions=8,
        requests=[
            Request("assets", "GET", "/assets/", weight=80),
            Request("asset", "GET", "/assets/{id}/",
                    params={"id": Param.rows("SELECT id FROM app_asset")}),
            Request("report", "POST", "/incidents/new/", weight=5, success=(302,),
                    form={"asset": "{id}", "title": "{title}"},
                    params={"id": Param.rows("SELECT id FROM app_asset"), "title": Param.text(2, 5)},
                    acknowledge=Acknowledge.location(r"/incidents/(\\d+)/"),
                    find="SELECT count(*) FROM app_incident WHERE id = ?"),
        ],
        invariants=[Invariant("incidents of no asset", "SELECT i.id FROM app_incident i "
                              "LEFT JOIN app_asset a ON a.id = i.asset_id WHERE a.id IS NULL")],
    )

A request's path, query, form, JSON body and headers are templates: `{name}` is one of its
parameters, drawn as in `declare` (`Param.integer`, `Param.text`, `Param.choice`) or from the
app's own data after its setup (`Param.rows(sql)`: the first column of every row, read once per
run); `{session}` is the number of the session the request goes on. A request whose status is
not in its `success` is a failure. A write may say what acknowledges it (a JSON field, a header,
a redirect's location) and `find`, one SQL query with one `?` for that value whose first column
counts the rows found: 0 is a lost write. An `Invariant` is SQL that must return no rows.

Every problem of the file is reported at once, each on a line naming the file and the request
(`RequestFileError`, exit 2), before anything starts.
"""

from __future__ import annotations

import dataclasses
import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..errors import UsageError
from ..workloads.registry import run_user_file
from ..workloads.values import Param

__all__ = ["Acknowledge", "Csrf", "Invariant", "Login", "Param", "Request", "Requests"]

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
SESSION_FIELD = "session"
_FORMATTER = string.Formatter()


class RequestFileError(UsageError):
    """A request file that cannot be used: every problem, each naming the file and the request."""


@dataclass(frozen=True)
class Acknowledge:
    """Where the app's answer to a write says which row it made: the value `find` looks up."""

    where: str  # "json", "header" or "location"
    name: str  # the JSON field, the header's name, or the location's pattern

    @classmethod
    def json(cls, field_name: str) -> Acknowledge:
        """A field of the JSON answer (`id`, or `order.id` for a nested one)."""
        return cls("json", field_name)

    @classmethod
    def header(cls, name: str) -> Acknowledge:
        """A header of the answer."""
        return cls("header", name.lower())

    @classmethod
    def location(cls, pattern: str) -> Acknowledge:
        """The redirect's Location; `pattern`'s first group is the value."""
        return cls("location", pattern)

    def problems(self) -> list[str]:
        if self.where == "location":
            try:
                if re.compile(self.name).groups < 1:
                    return [f"Acknowledge.location({self.name!r}) needs a group (...) around the value"]
            except re.error as exc:
                return [f"Acknowledge.location({self.name!r}) is not a pattern: {exc}"]
        return []

    def value(self, headers: Mapping[str, str], body: bytes) -> str | None:
        """The acknowledged value in an answer, or None when it is not there."""
        if self.where == "header":
            return headers.get(self.name)
        if self.where == "location":
            found = re.search(self.name, headers.get("location", ""))
            return found.group(1) if found else None
        try:
            value: Any = json.loads(body)
            for part in self.name.split("."):
                value = value[part]
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        return None if value is None else str(value)


@dataclass(frozen=True)
class Csrf:
    """Where a login (and every write after it) finds its CSRF token, as Django and Rails need."""

    source: str  # "cookie" or "page"
    name: str  # the cookie's name, or the page's pattern (its first group is the token)
    field: str = "csrfmiddlewaretoken"  # the form field the login posts it in
    header: str = "X-CSRFToken"  # the header every later request sends it in

    @classmethod
    def cookie(
        cls, name: str = "csrftoken", field: str = "csrfmiddlewaretoken", header: str = "X-CSRFToken"
    ) -> Csrf:
        """The token is the value of a cookie the login page sets (Django's csrftoken)."""
        return cls("cookie", name, field, header)

    @classmethod
    def page(
        cls,
        pattern: str = r'name="csrf-token" content="([^"]+)"',
        field: str = "authenticity_token",
        header: str = "X-CSRF-Token",
    ) -> Csrf:
        """The token is in the login page itself (Rails' csrf-token meta tag)."""
        return cls("page", pattern, field, header)


@dataclass(frozen=True)
class Login:
    """One login per session before the load: GET `path` (cookies, the CSRF token), then POST
    `form` to it; `{session}` in the form is the session's number (user{session})."""

    path: str
    form: Mapping[str, str] = field(default_factory=dict)
    csrf: Csrf | None = None
    success: tuple[int, ...] = (200, 302, 303)


@dataclass(frozen=True)
class Invariant:
    """SQL that must return no rows after the load; `name` says what a row of it means."""

    name: str
    sql: str


@dataclass(frozen=True)
class Request:
    """One named request of the mix."""

    name: str
    method: str
    path: str
    weight: float = 1.0
    params: Mapping[str, Param] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    form: Mapping[str, str] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    success: tuple[int, ...] = (200,)
    acknowledge: Acknowledge | None = None
    find: str | None = None

    @property
    def write(self) -> bool:
        return self.method not in ("GET", "HEAD")

    def templates(self) -> list[str]:
        """Every template text of the request, for the names they use."""
        texts = [self.path, *self.query.values(), *self.headers.values(), *(self.form or {}).values()]
        return texts + _json_strings(self.json)

    def problems(self) -> list[str]:
        """What is wrong with this request, each a phrase the file's message completes."""
        found = []
        if self.method not in METHODS:
            found.append(f"method {self.method!r} is not one of {', '.join(METHODS)}")
        if not self.path.startswith("/"):
            found.append(f"path {self.path!r} must start with /")
        if not self.weight >= 0:
            found.append(f"weight must be 0 or more, not {self.weight}")
        if not self.success or not all(isinstance(s, int) and 100 <= s <= 599 for s in self.success):
            found.append(f"success must be HTTP statuses, not {self.success!r}")
        if self.form is not None and self.json is not None:
            found.append("give a form or a JSON body, not both")
        for text in self.templates():
            try:
                names = {name for _, name, _, _ in _FORMATTER.parse(text) if name is not None}
            except ValueError as exc:
                found.append(f"template {text!r}: {exc}")
                continue
            for name in sorted(names - set(self.params) - {SESSION_FIELD}):
                found.append(f"{{{name}}} is not one of its params")
        for name, param in self.params.items():
            found.extend(param.validate(name, {}))
        if (self.acknowledge is None) != (self.find is None):
            found.append("acknowledge and find go together: one says the value, the other looks it up")
        if self.acknowledge is not None:
            found.extend(self.acknowledge.problems())
        if self.find is not None and self.find.count("?") != 1:
            found.append(f"find must have exactly one ? for the acknowledged value: {self.find!r}")
        return found

    def render(self, values: Mapping[str, Any], host: str, session: Session | None = None) -> bytes:
        """The whole HTTP/1.1 request for these parameter values, on `session` (its cookies and token)."""
        text = {name: value for name, value in values.items()}
        text[SESSION_FIELD] = session.number if session is not None else 0
        path = self.path.format_map({k: quote(str(v), safe="") for k, v in text.items()})
        if self.query:
            path += "?" + urlencode({k: v.format_map(text) for k, v in self.query.items()})
        headers = {k: v.format_map(text) for k, v in self.headers.items()}
        body = b""
        if self.form is not None:
            form = {k: v.format_map(text) for k, v in self.form.items()}
            if session is not None and session.csrf_field and session.token:
                form.setdefault(session.csrf_field, session.token)
            body = urlencode(form).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif self.json is not None:
            body = _fill_json(self.json, text).encode()
            headers.setdefault("Content-Type", "application/json")
        if session is not None:
            headers.update(session.headers(write=self.write))
        head = f"{self.method} {path} HTTP/1.1\r\nHost: {host}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        if body or self.write:
            head += f"Content-Length: {len(body)}\r\n"
        return head.encode() + b"\r\n" + body


def _json_strings(node: Any) -> list[str]:
    """Every string of a JSON body template, keys aside."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, Mapping):
        return [text for value in node.values() for text in _json_strings(value)]
    if isinstance(node, (list, tuple)):
        return [text for value in node for text in _json_strings(value)]
    return []


def _fill_json(template: Any, values: Mapping[str, Any]) -> str:
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


@dataclass(frozen=True)
class Session:
    """A logged-in session: its number, its cookies and its CSRF token, sent with each request."""

    number: int
    cookies: Mapping[str, str] = field(default_factory=dict)
    token: str | None = None
    csrf_field: str | None = None
    csrf_header: str | None = None

    def headers(self, write: bool) -> dict[str, str]:
        """Cookie (and, on a write, the CSRF header) for a request on this session."""
        found = {}
        if self.cookies:
            found["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        if write and self.token and self.csrf_header:
            found[self.csrf_header] = self.token
        return found


@dataclass(frozen=True)
class Requests:
    """The whole request file: the mix, the sessions and what must hold after the load."""

    requests: Sequence[Request]
    login: Login | None = None
    sessions: int = 0
    invariants: Sequence[Invariant] = ()
    source: str = ""

    def problems(self) -> list[str]:
        """Every problem, each `the request NAME: problem` or about the file as a whole."""
        found = []
        names = [request.name for request in self.requests]
        if not self.requests:
            found.append("it declares no request")
        for name in sorted({name for name in names if names.count(name) > 1}):
            found.append(f"two requests are called {name!r}")
        for request in self.requests:
            found.extend(f"the request {request.name!r}: {problem}" for problem in request.problems())
        if self.requests and not sum(request.weight for request in self.requests) > 0:
            found.append("the weights add up to 0: no request would be sent")
        if self.login is not None and self.sessions < 1:
            found.append("a login needs sessions=1 or more")
        if self.login is None and self.sessions:
            found.append(f"sessions={self.sessions} needs a login to make them")
        for invariant in self.invariants:
            if not re.match(r"\s*(select|with)\b", invariant.sql, re.IGNORECASE):
                found.append(f"the invariant {invariant.name!r}: needs a SELECT, not {invariant.sql[:40]!r}")
        return found

    def row_queries(self) -> tuple[str, ...]:
        """Each `Param.rows` SQL once, in the order the file gives them."""
        seen: dict[str, None] = {}
        for request in self.requests:
            for param in request.params.values():
                if param.kind == "rows":
                    seen[param.sql] = None
        return tuple(seen)

    def request(self, name: str) -> Request:
        return next(request for request in self.requests if request.name == name)


def load_request_file(path: Path) -> Requests:
    """The `requests = Requests(...)` of a Python file, checked; RequestFileError (exit 2) with
    every problem, each line naming the file, otherwise."""
    module = run_user_file(path, "request file (--requests)", RequestFileError, "dbladder_user_requests")
    declared = getattr(module, "requests", None)
    if not isinstance(declared, Requests):
        raise RequestFileError(f"{path}: the file defines no `requests = Requests(...)`")
    if problems := declared.problems():
        raise RequestFileError("\n".join(f"{path}: {problem}" for problem in problems))
    return dataclasses.replace(declared, source=str(path))
