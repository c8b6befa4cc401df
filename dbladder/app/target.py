"""The load's HTTP target for the user's app: each answer judged by its request's own success
statuses, acknowledged writes filed, the first failures of each kind kept.

A request's `success` decides, not the status class: a list page that redirects to the login
page (302) has failed, and a form post that redirects (302) has succeeded. An answer outside its
request's success statuses is a failure: a 4xx or 5xx keeps its class, any other is counted as
`unexpected` (dbladder.outcomes); so is a success whose page lacks the text that acknowledges it
(`Acknowledge.sent(..., contains=TEXT)`: a form shown again with its errors, answered 200). A
success is handed on as itself, or as 200 when it was a status the recorder would count as
failed (an app that answers 404 by design). The first few of
each (request, status) that failed are kept with the start of their bodies (`FailureSamples`),
and they travel to the round with the acknowledged writes.

Every answer's head is kept (KEEP_HEAD), since a write is acknowledged by a header or its
redirect's location as often as by its JSON; it is read only for a write that acknowledges and
for a failure. A write acknowledged by a value it sent carries that value from its rendering to
its answer (`render` -> `send` -> `_settle`), as the answer does not say it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..load.acknowledged import AcknowledgedWrites
from ..load.targets import RequestTarget, ResultCallback
from ..load.targets.http import KEEP_HEAD
from ..outcomes import UNEXPECTED
from .requests import Request


def split_answer(answer: bytes) -> tuple[dict[str, str], bytes]:
    """(headers by lower-case name, body) of an answer kept with its head."""
    head, _, body = answer.partition(b"\r\n\r\n")
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return headers, body


class AppTarget:
    """Wraps the HTTP target of one generator process; see the module notes."""

    def __init__(self, target: RequestTarget, requests: Sequence[Request], store: AcknowledgedWrites):
        self.target = target
        self.store = store
        self.timeout = target.timeout
        self.sweep_interval = target.sweep_interval
        self._names = [request.name for request in requests]
        self._success = [frozenset(request.success) for request in requests]
        self._acknowledge = [request.acknowledge for request in requests]
        # Where a request's args hold the value it acknowledges by (Acknowledge.sent): after the
        # session, its params in the file's order (app/workload.py).
        self._sent_at = [
            1 + list(request.params).index(request.sent_param) if request.sent_param else None
            for request in requests
        ]
        self._contains = [
            request.acknowledge.contains.encode()
            if request.acknowledge is not None and request.acknowledge.contains
            else None
            for request in requests
        ]
        self._render = target.render
        self._send = target.send

    @property
    def in_flight(self) -> int:
        return self.target.in_flight

    def render(self, request: tuple[int, Any]) -> tuple[int, Any, Any]:
        """(index, the bytes to send, the value the request acknowledges by if it sends it)."""
        index, args = request
        at = self._sent_at[index]
        return index, self._render(request), args[at] if at is not None else None

    def send(
        self,
        payload: tuple[int, Any, Any],
        callback: ResultCallback,
        token: Any = None,
        keep_body: bool = False,
    ) -> bool:
        index, data, sent = payload
        return self._send(data, self._settle, (index, callback, token, sent), KEEP_HEAD)  # type: ignore[arg-type]

    def _settle(
        self, state: tuple[int, ResultCallback, Any, Any], result: int | str, answer: bytes | None
    ) -> None:
        index, callback, token, sent = state
        if result.__class__ is not int:  # a timeout, a refused connection: the load's own causes
            callback(token, result, None)
            return
        status: int = result  # type: ignore[assignment]
        contains = self._contains[index]
        if status not in self._success[index] or (
            contains is not None and contains not in split_answer(answer or b"")[1]
        ):  # a page without the text that acknowledges it: the form shown again, say
            _, body = split_answer(answer or b"")
            self.store.failures.add(self._names[index], status, body)
            callback(token, status if status >= 400 else UNEXPECTED, None)
            return
        acknowledge = self._acknowledge[index]
        if acknowledge is not None:
            headers, body = split_answer(answer or b"")
            value = acknowledge.value(headers, body, sent)
            if value is None:  # a success that does not say what it wrote: counted, checked as nothing
                self.store.unreadable += 1
            else:
                self.store.add(self._names[index], (int(value) if _whole(value) else value,))
        callback(token, status if status < 400 else 200, None)

    def close(self) -> None:
        self.target.close()


def _whole(value: str) -> bool:
    return value.lstrip("-").isdigit() and len(value) < 19
