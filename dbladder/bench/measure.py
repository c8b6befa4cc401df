"""One measured stretch of work: how much was done, for how long, and the latency of each piece."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..histogram import Histogram

PERCENTILES = (50.0, 99.0)


@dataclass
class Measurement:
    """Operations done in `seconds`, the rows they read or wrote, and each operation's latency (us)."""

    operations: int = 0
    rows: int = 0
    seconds: float = 0.0
    latency: Histogram = field(default_factory=Histogram)
    errors: dict[str, int] = field(default_factory=dict)  # error kind -> count

    @property
    def per_second(self) -> float:
        return self.operations / self.seconds if self.seconds > 0 else 0.0

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def merge(self, other: Measurement) -> None:
        """Add another worker's measurement of the same stretch (side by side: the longer time)."""
        self.operations += other.operations
        self.rows += other.rows
        self.seconds = max(self.seconds, other.seconds)
        self.latency.merge(other.latency)
        for kind, count in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + count

    def extend(self, later: Measurement) -> None:
        """Add a measurement taken after this one (one after the other: the times add up)."""
        seconds = self.seconds + later.seconds
        self.merge(later)
        self.seconds = seconds

    def to_dict(self) -> dict[str, Any]:
        """The figures, rounded for people; latency in microseconds."""
        p50, p99 = self.latency.percentiles(PERCENTILES)
        return {
            "operations": self.operations,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "per_second": round(self.per_second, 1),
            "rows_per_second": round(self.rows_per_second, 1),
            "p50_us": p50,
            "p99_us": p99,
            "max_us": self.latency.max,
            "mean_us": round(self.latency.mean, 1),
            "errors": dict(self.errors),
        }

    def to_wire(self) -> dict[str, Any]:
        """An exact, JSON-able form for passing between processes."""
        return {
            "operations": self.operations,
            "rows": self.rows,
            "seconds": self.seconds,
            "latency": self.latency.to_dict(),
            "errors": dict(self.errors),
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Measurement:
        return cls(
            operations=data["operations"],
            rows=data["rows"],
            seconds=data["seconds"],
            latency=Histogram.from_dict(data["latency"]),
            errors=dict(data["errors"]),
        )
