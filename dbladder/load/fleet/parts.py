"""Which parts of a run's schedule a fleet sends (`PartRange`): parts numbered across every machine.

A run's schedule is cut into `total` parts: part p of `total` sends the requests i = p, p + total,
p + 2 * total, ... of every level (`dbladder.plans.due_times`), or every `total`-th user, and
draws mix stream p. One fleet of N processes on one machine owns all of them, [0, N) of N, and
that is every run on one machine. Fleets on several machines each own a range of the same total,
disjoint and together covering it (`check_ranges`, `split_parts`): between them they send exactly
what one fleet of `total` processes sends, the same due times and the same requests, and their
level snapshots merge as one fleet's processes' do.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import UsageError


class BadPartRange(UsageError):
    """A fleet's range of parts that is empty, falls outside the total, or overlaps another's."""


@dataclass(frozen=True)
class PartRange:
    """Parts [first, first + count) of `total`: process k of this fleet sends part first + k."""

    first: int
    count: int
    total: int

    def __post_init__(self) -> None:
        problems = [
            f"{name} must be a whole number, not {value!r}"
            for name, value in (("first", self.first), ("count", self.count), ("total", self.total))
            if not (isinstance(value, int) and not isinstance(value, bool))
        ]
        if not problems:
            if self.total < 1:
                problems.append(f"the total of parts must be 1 or more, not {self.total}")
            elif self.count < 1:
                problems.append(f"a fleet must own 1 part or more, not {self.count}")
            elif self.first < 0 or self.end > self.total:
                problems.append(f"parts {self.words} fall outside the {self.total} parts of the run")
        if problems:
            raise BadPartRange("bad range of parts: " + "; ".join(problems))

    @classmethod
    def whole(cls, parts: int) -> PartRange:
        """Every part of a run of `parts`: one machine's fleet."""
        return cls(0, parts, parts)

    @property
    def end(self) -> int:
        """The first part after this range."""
        return self.first + self.count

    @property
    def parts(self) -> range:
        """The global numbers of this range's parts, in the order of the fleet's processes."""
        return range(self.first, self.end)

    @property
    def is_whole(self) -> bool:
        return self.count == self.total

    @property
    def words(self) -> str:
        """The range as a user reads it: "parts 2-3 of 5" counts from 1, as the processes' names do."""
        return f"{self.first + 1}-{self.end}" if self.count > 1 else f"{self.first + 1}"


def check_ranges(ranges: Sequence[PartRange]) -> None:
    """Refuse ranges that are not one run's parts, each exactly once: totals that differ, two
    ranges that overlap, or parts no range owns (their requests would never be sent)."""
    if not ranges:
        raise BadPartRange("no fleet owns a part of the run")
    totals = sorted({r.total for r in ranges})
    if len(totals) > 1:
        raise BadPartRange(f"the fleets count their parts out of different totals: {totals}")
    ordered = sorted(ranges, key=lambda r: r.first)
    for before, after in itertools.pairwise(ordered):
        if after.first < before.end:
            raise BadPartRange(
                f"parts {before.words} and parts {after.words} of {before.total} overlap: "
                "their requests would be sent twice"
            )
    missing = [part for part in range(totals[0]) if not any(part in r.parts for r in ordered)]
    if missing:
        owned = ", ".join(r.words for r in ordered)
        raise BadPartRange(
            f"the fleets own parts {owned} of {totals[0]}: {len(missing)} part(s) from part "
            f"{missing[0] + 1} would never be sent"
        )


def split_parts(counts: Sequence[int]) -> list[PartRange]:
    """One range per fleet of `counts[i]` processes, in order, together covering every part."""
    total = sum(counts)
    ranges, first = [], 0
    for count in counts:
        ranges.append(PartRange(first, count, total))
        first += count
    check_ranges(ranges)
    return ranges
