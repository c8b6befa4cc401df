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
parameters, drawn as in `declare` (`Param.integer`, `Param.text`, `Param.choice`), from the
app's own data after its setup (`Param.rows(sql)`: the first column of every row, read once per
run) or unique to the request (`Param.unique()`); `{session}` is the number of the session the
request goes on, `{host}` the address dbladder sends to. A request whose status is not in its
`success` is a failure. A write may say what acknowledges it (a JSON field, a header, a
redirect's location, or a unique value it sent itself, for an app that answers a form with a
page and no id) and `find`, one SQL query with one `?` for that value whose first column counts
the rows found: 0 is a lost write. An `Invariant` is SQL that must return no rows.

For a site as it is deployed, and a visitor who never logs in:

    requests = Requests(
        headers={"X-Forwarded-Proto": "https", "Referer": "https://{host}/contact/"},
        visit=Visit("/contact/", csrf=Csrf.cookie("csrftoken")),
        sessions=8,
        requests=[
            Request("message", "POST", "/contact/", form={"subject": "{ref}", "message": "{words}"},
                    params={"ref": Param.unique(), "words": Param.text(5, 20)},
                    acknowledge=Acknowledge.sent("ref", contains="Thank you"),
                    find="SELECT count(*) FROM app_message WHERE subject = ?"),
        ],
    )

The file's `headers` go with every request and with each session's login or visit (a TLS
proxy's X-Forwarded-Proto, the Referer or Origin Django's CSRF check wants on HTTPS, a Host);
a request's own headers replace them by name. A session starts with a `Login` (a form posted)
or a `Visit` (a page that sets the CSRF cookie and token: a contact or sign-up form).

Every problem of the file is reported at once, each on a line naming the file and the request
(`RequestFileError`, exit 2), before anything starts; so is every problem of its SQL on the
app's data, found after the setup and before the app starts (`checks.check_queries`): a
`Param.rows` query, a `find` or an invariant the engine refuses (a table the setup has not
made, a wrong column), one that fails when run (a `find` whose one `?` the engine does not see
as a placeholder), a `Param.rows` query that finds no rows.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..errors import UsageError
from ..workloads.registry import run_user_file
from ..workloads.values import Param
from .templates import (
    HOST_FIELD,
    OWN_FIELDS,
    SESSION_FIELD,
    fill_json,
    header_problems,
    json_strings,
    merge_headers,
    template_names,
)

__all__ = ["Acknowledge", "Csrf", "Invariant", "Login", "Param", "Request", "Requests", "Visit"]

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


class RequestFileError(UsageError):
    """A request file that cannot be used: every problem, each naming the file and the request."""


@dataclass(frozen=True)
class Acknowledge:
    """Where the app's answer to a write says which row it made: the value `find` looks up."""

    where: str  # "json", "header", "location" or "sent"
    name: str  # the JSON field, the header's name, the location's pattern, or the sent parameter
    contains: str | None = None  # "sent": the text an answer that acknowledges must contain

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

    @classmethod
    def sent(cls, param: str, contains: str | None = None) -> Acknowledge:
        """The value the request itself sent as its parameter `param`, a `Param.unique()`: for an
        app that answers a form with a page and no id. With `contains`, an answer in the request's
        success statuses acknowledges only when its body contains that text (a thank-you line);
        one without it, the form shown again with its errors, is a failure."""
        return cls("sent", param, contains)

    def problems(self) -> list[str]:
        if self.where == "location":
            try:
                if re.compile(self.name).groups < 1:
                    return [f"Acknowledge.location({self.name!r}) needs a group (...) around the value"]
            except re.error as exc:
                return [f"Acknowledge.location({self.name!r}) is not a pattern: {exc}"]
        return []

    def value(self, headers: Mapping[str, str], body: bytes, sent: Any = None) -> str | None:
        """The acknowledged value in an answer (`sent`: the value the request sent), or None when
        it is not there."""
        if self.where == "sent":
            return None if sent is None else str(sent)
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
class Visit:
    """A session's start without a login: GET `path`, a page that sets the CSRF cookie and token
    (a contact form, a sign-up form); its cookies and token go with every request on the session."""

    path: str
    csrf: Csrf | None = None
    success: tuple[int, ...] = (200,)


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
        return texts + json_strings(self.json)

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
        found.extend(header_problems(self.headers))
        used: set[str] = set()
        for text in self.templates():
            try:
                names = template_names(text)
            except ValueError as exc:
                found.append(f"template {text!r}: {exc}")
                continue
            used |= names
            for name in sorted(names - set(self.params) - set(OWN_FIELDS)):
                found.append(f"{{{name}}} is not one of its params")
        for name, param in self.params.items():
            if name in OWN_FIELDS:
                found.append(f"a parameter cannot be called {name!r}: {{{name}}} is dbladder's own")
            found.extend(param.validate(name, {}))
        if (self.acknowledge is None) != (self.find is None):
            found.append("acknowledge and find go together: one says the value, the other looks it up")
        if self.acknowledge is not None:
            found.extend(self.acknowledge.problems())
            if self.acknowledge.where == "sent":
                found.extend(self._sent_problems(used))
        if self.find is not None and self.find.count("?") != 1:
            found.append(f"find must have exactly one ? for the acknowledged value: {self.find!r}")
        # It is run before the app starts (checks.check_queries): a query, never a change.
        if self.find is not None and not _is_query(self.find):
            found.append(f"find needs a SELECT, not {self.find[:40]!r}")
        return found

    def _sent_problems(self, used: set[str]) -> list[str]:
        """An acknowledgement by a sent value needs a value no other write sends, and sent."""
        assert self.acknowledge is not None  # the caller's check
        name = self.acknowledge.name
        said = f"Acknowledge.sent({name!r})"
        param = self.params.get(name)
        if param is None:
            return [f"{said} names none of its params"]
        if param.kind != "unique":
            return [f"{said} needs Param.unique(): a value two writes may send cannot tell which was kept"]
        if name not in used:
            return [f"{said}: {{{name}}} is in none of its templates, so the app never receives it"]
        return []

    @property
    def sent_param(self) -> str | None:
        """The parameter whose value acknowledges the write (`Acknowledge.sent`), or None."""
        acknowledge = self.acknowledge
        return acknowledge.name if acknowledge is not None and acknowledge.where == "sent" else None

    def render(
        self,
        values: Mapping[str, Any],
        host: str,
        session: LoginSession | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        """The whole HTTP/1.1 request for these parameter values, on `session` (its cookies and
        token). `headers` are the file's, for every request: the request's own replace one of the
        same name, and a Host among them replaces the address's."""
        text = {name: value for name, value in values.items()}
        text[SESSION_FIELD] = session.number if session is not None else 0
        text[HOST_FIELD] = host
        path = self.path.format_map({k: quote(str(v), safe="") for k, v in text.items()})
        if self.query:
            path += "?" + urlencode({k: v.format_map(text) for k, v in self.query.items()})
        sent = merge_headers(
            {k: v.format_map(text) for k, v in (headers or {}).items()},
            {k: v.format_map(text) for k, v in self.headers.items()},
        )
        body = b""
        if self.form is not None:
            form = {k: v.format_map(text) for k, v in self.form.items()}
            if session is not None and session.csrf_field and session.token:
                form.setdefault(session.csrf_field, session.token)
            body = urlencode(form).encode()
            sent = merge_headers(sent, {"Content-Type": "application/x-www-form-urlencoded"}, keep=True)
        elif self.json is not None:
            body = fill_json(self.json, text).encode()
            sent = merge_headers(sent, {"Content-Type": "application/json"}, keep=True)
        if session is not None:
            sent = merge_headers(sent, session.headers(write=self.write))
        given_host = next((name for name in sent if name.lower() == "host"), None)
        head = f"{self.method} {path} HTTP/1.1\r\nHost: {sent.pop(given_host) if given_host else host}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in sent.items())
        if body or self.write:
            head += f"Content-Length: {len(body)}\r\n"
        return head.encode() + b"\r\n" + body


@dataclass(frozen=True)
class LoginSession:
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
    headers: Mapping[str, str] = field(default_factory=dict)  # sent with every request and the login
    visit: Visit | None = None  # a session's start without a login

    @property
    def start(self) -> Login | Visit | None:
        """How each session starts: the login, the visit, or None when there are no sessions."""
        return self.login if self.login is not None else self.visit

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
        found.extend(f"headers: {problem}" for problem in header_problems(self.headers, OWN_FIELDS))
        if self.login is not None and self.visit is not None:
            found.append("give a login or a visit, not both: each session starts with one of them")
        elif self.start is not None and self.sessions < 1:
            found.append(f"a {'login' if self.login else 'visit'} needs sessions=1 or more")
        if self.start is None and self.sessions:
            found.append(f"sessions={self.sessions} needs a login or a visit to make them")
        if self.visit is not None and not self.visit.path.startswith("/"):
            found.append(f"the visit's path {self.visit.path!r} must start with /")
        for invariant in self.invariants:
            if not _is_query(invariant.sql):
                found.append(f"the invariant {invariant.name!r}: needs a SELECT, not {invariant.sql[:40]!r}")
        return found

    def row_queries(self) -> tuple[str, ...]:
        """Each `Param.rows` SQL once, in the order the file gives them."""
        return tuple(dict.fromkeys(sql for _, _, sql in self.row_params()))

    def row_params(self) -> list[tuple[str, str, str]]:
        """(request, parameter, SQL) of every `Param.rows`, in the order the file gives them."""
        return [
            (request.name, name, param.sql)
            for request in self.requests
            for name, param in request.params.items()
            if param.kind == "rows"
        ]

    def request(self, name: str) -> Request:
        return next(request for request in self.requests if request.name == name)


def _is_query(sql: str) -> bool:
    """Whether the SQL reads (SELECT, or WITH ... SELECT), as `find` and an invariant must."""
    return re.match(r"\s*(select|with)\b", sql, re.IGNORECASE) is not None


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
