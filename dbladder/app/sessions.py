"""Sessions made before the load: one login, or one visit, each; its cookies and CSRF token kept.

A login GETs its page (cookies, the CSRF token) and POSTs its form; a visit only GETs its page, a
contact or sign-up form that sets the CSRF cookie and token for a visitor who never logs in. The
file's headers (`Requests.headers`: a TLS proxy's X-Forwarded-Proto, a Referer or Origin for
Django's check on HTTPS) go with both, as with every request.

The cookies a session's start leaves are sent, as one Cookie header, with every request on that
session, and the token as the CSRF header on every write. They are fixed for the load: a
framework that rotates its session cookie on every answer would need them read back per
connection, which the load's client does not do (it renders each request to bytes before it
sends it, and that is what keeps its per-request cost low).
"""

from __future__ import annotations

import http.client
import re
from collections.abc import Mapping
from http.cookies import SimpleCookie
from urllib.parse import urlencode

from ..errors import DbladderError
from .requests import Csrf, Login, LoginSession, Visit
from .templates import HOST_FIELD, SESSION_FIELD, merge_headers

BODY_SHOWN = 200


class LoginFailed(DbladderError):
    """A session's login was not answered with one of its success statuses."""


class VisitFailed(DbladderError):
    """A session's visit (its start without a login) was not answered with one of its success statuses."""


def _cookies(answer: http.client.HTTPResponse, into: dict[str, str]) -> None:
    for header in answer.headers.get_all("Set-Cookie") or ():
        for name, morsel in SimpleCookie(header).items():
            into[name] = morsel.value


def _exchange(
    host: str,
    port: int,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes | None,
    timeout: float,
) -> tuple[http.client.HTTPResponse, bytes]:
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=dict(headers))
        answer = connection.getresponse()
        return answer, answer.read()
    finally:
        connection.close()


def _filled(headers: Mapping[str, str], host: str, port: int, number: int) -> dict[str, str]:
    """The file's headers for session `number`: {session} and {host} filled in."""
    fields = {SESSION_FIELD: number, HOST_FIELD: f"{host}:{port}"}
    return {name: value.format_map(fields) for name, value in headers.items()}


def _page(
    host: str,
    port: int,
    path: str,
    csrf: Csrf | None,
    number: int,
    headers: Mapping[str, str],
    timeout: float,
) -> tuple[http.client.HTTPResponse, bytes, dict[str, str], str | None]:
    """GET a session's first page: its answer, body, cookies and CSRF token (None when there is none)."""
    cookies: dict[str, str] = {}
    answer, page = _exchange(host, port, "GET", path, headers, None, timeout)
    _cookies(answer, cookies)
    token = None
    if csrf is not None:
        if csrf.source == "cookie":
            token = cookies.get(csrf.name)
        else:
            found = re.search(csrf.name, page.decode(errors="replace"))
            token = found.group(1) if found else None
    return answer, page, cookies, token


def _no_token(csrf: Csrf, number: int, what: str, answer: http.client.HTTPResponse, page: bytes) -> str:
    where = f"no cookie {csrf.name!r}" if csrf.source == "cookie" else f"nothing matched {csrf.name!r}"
    return (
        f"session {number}: {what} gave no CSRF token ({where}; it answered "
        f"{answer.status}: {page[:BODY_SHOWN]!r})"
    )


def login(
    host: str,
    port: int,
    spec: Login,
    number: int,
    timeout: float = 10.0,
    headers: Mapping[str, str] | None = None,
) -> LoginSession:
    """Log session `number` in: GET the login page (cookies, token), POST its form; `headers`
    (the file's) with both, a Referer among them replacing the login page's own."""
    sent = _filled(headers or {}, host, port, number)
    csrf = spec.csrf
    answer, page, cookies, token = _page(host, port, spec.path, csrf, number, sent, timeout)
    if csrf is not None and token is None:
        raise LoginFailed(_no_token(csrf, number, f"the login page {spec.path}", answer, page))
    form = {name: value.format(session=number) for name, value in spec.form.items()}
    posted = merge_headers(
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://{host}:{port}{spec.path}",
        },
        sent,
    )
    if csrf is not None and token is not None:
        form.setdefault(csrf.field, token)
        posted = merge_headers(posted, {csrf.header: token})
    if cookies:
        posted = merge_headers(posted, {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
    answer, body = _exchange(host, port, "POST", spec.path, posted, urlencode(form).encode(), timeout)
    if answer.status not in spec.success:
        raise LoginFailed(
            f"session {number}: the login POST {spec.path} answered {answer.status}, not one of "
            f"{', '.join(map(str, spec.success))}: {body[:BODY_SHOWN]!r}"
        )
    _cookies(answer, cookies)
    if csrf is not None and csrf.source == "cookie":
        token = cookies.get(csrf.name, token)  # Django rotates the token at login
    return _session(number, cookies, token, csrf)


def visit(
    host: str,
    port: int,
    spec: Visit,
    number: int,
    timeout: float = 10.0,
    headers: Mapping[str, str] | None = None,
) -> LoginSession:
    """Start session `number` without a login: GET the visit's page, keep its cookies and token."""
    csrf = spec.csrf
    answer, page, cookies, token = _page(
        host, port, spec.path, csrf, number, _filled(headers or {}, host, port, number), timeout
    )
    if answer.status not in spec.success:
        raise VisitFailed(
            f"session {number}: the visit GET {spec.path} answered {answer.status}, not one of "
            f"{', '.join(map(str, spec.success))}: {page[:BODY_SHOWN]!r}"
        )
    if csrf is not None and token is None:
        raise VisitFailed(_no_token(csrf, number, f"the visit's page {spec.path}", answer, page))
    return _session(number, cookies, token, csrf)


def _session(number: int, cookies: dict[str, str], token: str | None, csrf: Csrf | None) -> LoginSession:
    return LoginSession(
        number,
        cookies,
        token,
        csrf.field if csrf is not None else None,
        csrf.header if csrf is not None else None,
    )


def make_sessions(
    host: str,
    port: int,
    spec: Login | Visit | None,
    count: int,
    headers: Mapping[str, str] | None = None,
) -> tuple[LoginSession, ...]:
    """`count` sessions (numbered 1..count), each logged in or started by a visit, or () when the
    file has neither; `headers` are the file's (`Requests.headers`), sent with each."""
    if spec is None:
        return ()
    if isinstance(spec, Login):
        return tuple(login(host, port, spec, number, headers=headers) for number in range(1, count + 1))
    return tuple(visit(host, port, spec, number, headers=headers) for number in range(1, count + 1))
