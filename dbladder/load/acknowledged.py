"""Acknowledged writes: what the database promised to keep, recorded by the generator for the
integrity check after the run.

A write answered 2xx is a promise: the database says it has the order (or the post, or the
row). `AcknowledgingTarget` wraps an executor's target and, for write operations that have an
`acknowledge` hook, keeps the body of the answer, decodes it and files the operation's compact
record (for the shop: order id, total, and the items as product, quantity pairs) in an
`AcknowledgedWrites` store. Reads pass straight through: the wrapper costs them one class check.
The executors, the recorder and its level histograms never see any of it.

Memory: records of whole numbers (the common case, and the shop's) are packed into one
`array("q")` per (operation, record width): 8 bytes a number, so a shop order costs 48 bytes (id,
total, two product and quantity pairs), and a write ladder's 630,000 orders (the `write` preset
climbing all 20 levels) about 30 MB in the parent. A record with anything else in it (text, a
float) is kept as a tuple, at Python's usual cost (about 150 bytes for three small values).
A generator process hands its records to the parent every half second (`take`), so a process
holds at most that long's worth.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import msgspec

from ..workloads.base import Workload
from .mix import Request
from .targets import RequestTarget, ResultCallback

INT64 = (-(2**63), 2**63 - 1)
SAMPLES_PER_KIND = 3
BODY_KEPT = 200

_decode = msgspec.json.decode


class Records(Sequence[tuple[Any, ...]]):
    """One operation's records: whole-number records packed in arrays by width, the rest as tuples.

    A Sequence of tuples for any workload's `verify`; `columns()` gives the packed part as numpy
    arrays (one per record width) for a check that wants to stay vectorised.
    """

    def __init__(self, packed: Mapping[int, array] | None = None, other: Sequence[tuple[Any, ...]] = ()):
        self.packed = {width: numbers for width, numbers in (packed or {}).items() if numbers}
        self.other = list(other)
        self._sizes = [(width, len(numbers) // width) for width, numbers in sorted(self.packed.items())]

    def __len__(self) -> int:
        return sum(count for _, count in self._sizes) + len(self.other)

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[Any, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | Sequence[tuple[Any, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError("record index out of range")
        for width, count in self._sizes:
            if index < count:
                return tuple(self.packed[width][index * width : (index + 1) * width])
            index -= count
        return self.other[index]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        for width, count in self._sizes:
            numbers = self.packed[width]
            for i in range(count):
                yield tuple(numbers[i * width : (i + 1) * width])
        yield from self.other

    def columns(self) -> dict[int, Any]:
        """{width: numpy array of shape (records, width)} for the packed records (no copy)."""
        import numpy as np

        return {
            width: np.frombuffer(numbers, dtype=np.int64).reshape(-1, width)
            for width, numbers in self.packed.items()
        }


class FailureSamples:
    """The first few answers of each kind (request, status) that were not a success, so that a user
    can see why (the first BODY_KEPT bytes of each body), and how many of each kind there were."""

    def __init__(self, per_kind: int = SAMPLES_PER_KIND) -> None:
        self.per_kind = per_kind
        self.counts: dict[tuple[str, int], int] = {}
        self.kept: dict[tuple[str, int], list[str]] = {}

    def __bool__(self) -> bool:
        return bool(self.counts)

    def add(self, request: str, status: int, body: bytes | None, count: int = 1) -> None:
        key = (request, status)
        self.counts[key] = self.counts.get(key, 0) + count
        bodies = self.kept.setdefault(key, [])
        if len(bodies) < self.per_kind and body is not None:
            bodies.append(body[:BODY_KEPT].decode(errors="replace"))

    def take(self) -> list[tuple[str, int, int, list[str]]]:
        """Everything since the last take, as plain data, and forget the counts (not what was kept,
        so a process keeps no more than `per_kind` bodies of a kind over the whole run)."""
        taken = [
            (name, status, count, self.kept[(name, status)]) for (name, status), count in self.counts.items()
        ]
        self.counts = {}
        self.kept = {key: [""] * len(bodies) for key, bodies in self.kept.items()}
        return taken

    def extend(self, taken: Sequence[tuple[str, int, int, list[str]]]) -> None:
        """Add what `take` gave (in another process)."""
        for name, status, count, bodies in taken:
            key = (name, status)
            self.counts[key] = self.counts.get(key, 0) + count
            mine = self.kept.setdefault(key, [])
            mine.extend(body for body in bodies if body and len(mine) < self.per_kind)

    def to_list(self) -> list[dict[str, Any]]:
        return [
            {"request": name, "status": status, "count": count, "bodies": self.kept.get((name, status), [])}
            for (name, status), count in sorted(self.counts.items())
        ]


class AcknowledgedWrites:
    """The records of acknowledged writes, by operation name; cheap to add to, plain to ship.

    `failures` samples the answers a target counted as failures by their status (the user's app:
    a status outside a request's success list); they travel with the records."""

    def __init__(self) -> None:
        self._packed: dict[str, dict[int, array]] = {}
        self._other: dict[str, list[tuple[Any, ...]]] = {}
        self.count = 0
        self.unreadable = 0
        """Writes answered 2xx whose answer could not be read into a record (checked as nothing)."""
        self.failures = FailureSamples()

    def add(self, operation: str, record: tuple[Any, ...]) -> None:
        """File one record."""
        self.count += 1
        # An empty record (a write that answered nothing to look up) is kept as a tuple: still counted.
        if record and all(value.__class__ is int and INT64[0] <= value <= INT64[1] for value in record):
            by_width = self._packed.get(operation)
            if by_width is None:
                by_width = self._packed[operation] = {}
            numbers = by_width.get(len(record))
            if numbers is None:
                numbers = by_width[len(record)] = array("q")
            numbers.extend(record)
        else:
            self._other.setdefault(operation, []).append(tuple(record))

    def take(self) -> dict[str, Any] | None:
        """Everything filed since the last take, as plain picklable data (None when nothing was),
        and forget it here."""
        if not self.count and not self.unreadable and not self.failures:
            return None
        chunk = {
            "count": self.count,
            "unreadable": self.unreadable,
            "failures": self.failures.take(),
            "packed": {
                name: {width: numbers.tobytes() for width, numbers in by_width.items()}
                for name, by_width in self._packed.items()
            },
            "other": self._other,
        }
        self._packed, self._other, self.count, self.unreadable = {}, {}, 0, 0
        return chunk

    def extend(self, chunk: Mapping[str, Any]) -> None:
        """Add a chunk that `take` made (in another process)."""
        self.count += chunk["count"]
        self.unreadable += chunk["unreadable"]
        self.failures.extend(chunk.get("failures", ()))
        for name, by_width in chunk["packed"].items():
            mine = self._packed.setdefault(name, {})
            for width, raw in by_width.items():
                numbers = mine.get(width)
                if numbers is None:
                    numbers = mine[width] = array("q")
                numbers.frombytes(raw)
        for name, records in chunk["other"].items():
            self._other.setdefault(name, []).extend(records)

    def by_operation(self) -> dict[str, Records]:
        """The records of each operation that has any."""
        names = list(dict.fromkeys([*self._packed, *self._other]))
        return {name: Records(self._packed.get(name), self._other.get(name, ())) for name in names}

    @property
    def nbytes(self) -> int:
        """Bytes the packed records take (the tuples of other records not counted)."""
        return sum(n.itemsize * len(n) for by_width in self._packed.values() for n in by_width.values())


class _Write:
    """A rendered write request that will be acknowledged: the target's payload and the request."""

    __slots__ = ("payload", "request")

    def __init__(self, payload: Any, request: Request):
        self.payload = payload
        self.request = request


class AcknowledgingTarget:
    """A target that records the acknowledged writes of `workload` in `store`; see the module notes.

    It asks the wrapped target for the body of write answers only (`send(..., keep_body=True)`):
    over HTTP the bytes of the answer, in direct mode the operation's Answer body itself.
    """

    def __init__(self, target: RequestTarget, workload: Workload, store: AcknowledgedWrites):
        self.target = target
        self.store = store
        self.timeout = target.timeout
        self.sweep_interval = target.sweep_interval
        self._hooks = [
            (operation.name, operation.acknowledge)
            if operation.write and operation.acknowledge is not None
            else None
            for operation in workload.operations
        ]
        self._render = target.render
        self._send = target.send

    @property
    def in_flight(self) -> int:
        return self.target.in_flight

    def render(self, request: Request) -> Any:
        if self._hooks[request[0]] is None:
            return self._render(request)
        return _Write(self._render(request), request)

    def send(
        self, payload: Any, callback: ResultCallback, token: Any = None, keep_body: bool = False
    ) -> bool:
        if payload.__class__ is not _Write:
            return self._send(payload, callback, token, keep_body)
        return self._send(payload.payload, self._settle, (payload.request, callback, token), True)

    def _settle(self, state: tuple[Request, ResultCallback, Any], result: int | str, body: Any) -> None:
        request, callback, token = state
        if result.__class__ is int and 200 <= result < 300:  # type: ignore[operator]
            name, acknowledge = self._hooks[request[0]]  # type: ignore[misc]
            try:
                decoded = _decode(body) if isinstance(body, bytes | bytearray | memoryview) else body
                record = acknowledge(request[1], decoded)
            except Exception:
                # A 2xx whose answer does not say what was written: counted, and the check says so.
                self.store.unreadable += 1
            else:
                self.store.add(name, tuple(record))
        callback(token, result, None)

    def close(self) -> None:
        self.target.close()
