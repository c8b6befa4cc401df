"""Stand-ins for the workload interface's types until `dbladder.workloads.base` provides them.

`Answer` and `Draw` have the shape of the interface draft, so switching is an import change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Answer:
    """What an operation gives back; the service encodes `body` as JSON."""

    status: int
    body: Any = None


class Draw(Protocol):
    """A deterministic random source for the load generator (one per process stream)."""

    def random(self) -> float: ...

    def below(self, n: int) -> int: ...  # 0..n-1

    def id(self, n: int) -> int: ...  # 1..n
