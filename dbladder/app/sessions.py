"""Sessions made before the load: one login each, its cookies and CSRF token kept.

The cookies a login leaves are sent, as one Cookie header, with every request on that session,
and the token as the CSRF header on every write. They are fixed for the load: a framework that
rotates its session cookie on every answer would need them read back per connection, which the
load's client does not do (it renders each request to bytes before it sends it, and that is
what keeps its per-request cost low).
"""

from __future__ import annotations

import http.client
import re
from collections.abc import Mapping
from http.cookies import SimpleCookie
from urllib.parse import urlencode

from ..errors import DbladderError
from .requests import Login, Session

BODY_SHOWN = 200


class LoginFailed(DbladderError):
    """A session's login was not answered with one of its success statuses."""


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


def login(host: str, port: int, spec: Login, number: int, timeout: float = 10.0) -> Session:
    """Log session `number` in: GET the login page (cookies, token), POST its form."""
    cookies: dict[str, str] = {}
    answer, page = _exchange(host, port, "GET", spec.path, {}, None, timeout)
    _cookies(answer, cookies)
    token = None
    csrf = spec.csrf
    if csrf is not None:
        if csrf.source == "cookie":
            token = cookies.get(csrf.name)
        else:
            found = re.search(csrf.name, page.decode(errors="replace"))
            token = found.group(1) if found else None
        if token is None:
            where = (
                f"no cookie {csrf.name!r}" if csrf.source == "cookie" else f"nothing matched {csrf.name!r}"
            )
            raise LoginFailed(
                f"session {number}: the login page {spec.path} gave no CSRF token ({where}; it answered "
                f"{answer.status}: {page[:BODY_SHOWN]!r})"
            )
    form = {name: value.format(session=number) for name, value in spec.form.items()}
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Referer": f"http://{host}:{port}{spec.path}",
    }
    if csrf is not None and token is not None:
        form.setdefault(csrf.field, token)
        headers[csrf.header] = token
    if cookies:
        headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
    answer, body = _exchange(host, port, "POST", spec.path, headers, urlencode(form).encode(), timeout)
    if answer.status not in spec.success:
        raise LoginFailed(
            f"session {number}: the login POST {spec.path} answered {answer.status}, not one of "
            f"{', '.join(map(str, spec.success))}: {body[:BODY_SHOWN]!r}"
        )
    _cookies(answer, cookies)
    if csrf is not None and csrf.source == "cookie":
        token = cookies.get(csrf.name, token)  # Django rotates the token at login
    return Session(
        number,
        cookies,
        token,
        csrf.field if csrf is not None else None,
        csrf.header if csrf is not None else None,
    )


def make_sessions(host: str, port: int, spec: Login | None, count: int) -> tuple[Session, ...]:
    """`count` logged-in sessions (numbered 1..count), or () when the file has no login."""
    if spec is None:
        return ()
    return tuple(login(host, port, spec, number) for number in range(1, count + 1))
