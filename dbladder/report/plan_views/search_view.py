"""A ceiling search as the reports ask it (`views.PlanView`): probes at rates chosen one after another."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ...formats import plain, rate
from ...plans import Plan, Search
from .ladder_view import OPEN_MODEL, PlanView


@dataclass(frozen=True)
class SearchView(PlanView):
    """A ceiling search: probes at rates chosen one after another."""

    plan: ClassVar[type[Plan]] = Search
    name: ClassVar[str] = "search"
    probes_in_order: ClassVar[bool] = True
    top_words: ClassVar[str] = "every probe"
    precision_order: ClassVar[int] = 0

    @property
    def calibrated(self) -> bool:
        """Whether the start was calibrated on the app (each run its own start, the same round)."""
        return self.result.search is not None and self.result.search.calibration is not None

    def key(self) -> tuple[object, ...]:
        search = self.result.config.search
        fields = ("start", "factor", "resolution", "hold", "warmup", "min_answers")
        key = ["search", *(getattr(search, name) if search else None for name in fields)]
        if self.calibrated:  # runs of one comparison calibrate their own starts
            key[1] = "calibrated"
        return tuple(key)

    def title(self) -> str:
        if self.calibrated:
            return "ceiling search from a calibrated start"
        search = self.result.config.search
        start = search.start if search and search.start is not None else 0
        return f"ceiling search from {rate(start)} req/s"

    def held_words(self) -> str:
        """A search's ceiling: "2,000 req/s (held; 2,090 failed, 4.5 % above, after 8 probes)"."""
        search = self.result.search
        if search is None:
            return super().held_words()
        held, failed, probes = search.held_rps, search.failed_rps, search.probes or 0
        if held is None:
            lowest = min(level.offered_rps for level in self.result.levels)
            return f"none: no probe held, down to {lowest:,.0f} req/s"
        if failed is None:
            return f"at least {held:,.0f} req/s (every probe held; the search did not find a limit)"
        return (
            f"{held:,.0f} req/s (held; {failed:,.0f} failed, {100 * (failed / held - 1):.1f} % above, "
            f"after {probes} probes)"
        )

    def sentence(self, name: str) -> str:
        """A ceiling search in a sentence: the bracket it ended on, and why the rate above failed."""
        levels = self.result.levels
        ceiling = self.result.ceiling_rps
        failed = [level for level in levels if not level.passed]
        if not failed:
            top = max(level.offered_rps for level in levels)
            return (
                f"{name} held every probe, up to {rate(top)} req/s: the search found no limit "
                f"in {len(levels)} probes."
            )
        lowest = min(failed, key=lambda level: level.offered_rps)
        why = "; ".join(lowest.reasons) or "it failed"
        if ceiling is None:
            return (
                f"{name} held no probe, down to {rate(min(level.offered_rps for level in levels))} "
                f"req/s ({why} at {rate(lowest.offered_rps)} req/s)."
            )
        return (
            f"{name} held {rate(ceiling)} req/s; {rate(lowest.offered_rps)} req/s failed ({why}), "
            f"found in {len(levels)} probes."
        )

    def holds(self) -> list[float]:
        search = self.result.config.search
        return [] if search is None or search.hold is None else [float(search.hold)]

    def facts(self) -> dict[str, str]:
        search = self.result.config.search
        if search is None:
            return {"search": "-", "model": OPEN_MODEL}
        resolution = None if search.resolution is None else 100 * search.resolution
        return {
            "search": f"from {rate(search.start or 0)} req/s, x{plain(search.factor)} until a probe "
            f"fails, then halving the gap between held and failed down to {plain(resolution)} %, "
            f"within {plain(search.budget)} s",
            "hold": f"{plain(search.hold)} s per probe; the first {plain(search.warmup)} s left out "
            "of its figures"
            + (
                f"; longer at a low rate, until its window has {search.min_answers:,} requests "
                "(at most 6 times the hold)"
                if search.min_answers
                else ""
            ),
            "model": OPEN_MODEL,
        }

    @property
    def resolution(self) -> float:
        """A search's bracket: the lowest rate failed over the highest held."""
        search = self.result.search
        held, failed = (search.held_rps, search.failed_rps) if search else (None, None)
        if held and failed:
            return float(failed) / float(held) - 1
        return float((search.resolution if search else None) or 0.0)

    def summary_tail(self) -> list[str]:
        search = self.result.search
        if search is None:
            return []
        lines = [f"again    {words}" for words in self.probed_again_words()]
        if search.ceiling_rests_on is not None:
            lines.append(f"rests on {search.ceiling_rests_on.words}")
        elif search.rests_on_a_stall:  # a result from before the search said what it rests on
            lines.append("stall    the ceiling still rests on a probe that failed by a stall, twice")
        return lines

    def probed_again_words(self) -> list[str]:
        """Each rate probed twice, in words: "8 req/s probed again (levels 1 and 2) after the first
        probe: held the second time, so it is not the ceiling"."""
        search = self.result.search
        lines = []
        for again in (search.probed_again if search is not None else None) or ():
            numbers = " and ".join(str(number) for number in again.levels)
            after = f" after {again.because}" if again.because else ""
            outcome = (
                "failed again" if again.failed_again else "held the second time, so it is not the ceiling"
            )
            lines.append(f"{rate(again.rate_rps)} req/s probed again (levels {numbers}){after}: {outcome}")
        return lines

    def level_notes(self) -> list[str]:
        """Each second probe of a rate, beside the level table: "Level 2: the second probe of 8
        req/s (level 1 failed it: the first probe); held, so 8 req/s is not the ceiling"."""
        search = self.result.search
        notes = []
        for again in (search.probed_again if search is not None else None) or ():
            first, second = again.levels[0], again.levels[-1]
            why = f": {again.because}" if again.because else ""
            outcome = (
                "failed again"
                if again.failed_again
                else f"held, so {rate(again.rate_rps)} req/s is not the ceiling"
            )
            notes.append(
                f"Level {second}: the second probe of {rate(again.rate_rps)} req/s (level {first} "
                f"failed it{why}); {outcome}"
            )
        if search is not None and search.ceiling_rests_on is not None:
            notes.append(f"The ceiling rests on {search.ceiling_rests_on.words}.")
        return notes

    def stall_line(self) -> str | None:
        """The rates probed twice and on what the ceiling rests; for an older result, whether a
        probe that failed by a stall and was run once more still holds the ceiling up."""
        search = self.result.search
        if search is None:
            return None
        if search.ceiling_rests_on is not None or search.probed_again:
            sentences = [f"{words[0].upper()}{words[1:]}." for words in self.probed_again_words()]
            if search.ceiling_rests_on is not None:
                sentences.append(f"The ceiling rests on {search.ceiling_rests_on.words}.")
            return " ".join(sentences)
        if search.rests_on_a_stall is None:
            return None
        if search.rests_on_a_stall:
            return (
                "the ceiling still rests on a stall: the probe above it failed by a stall, "
                "and again when it was run once more."
            )
        return (
            "a probe that failed by a stall was run once more, and its second result is "
            "the one the ceiling uses (both are in the levels)."
        )

    def bracket(self) -> float | None:
        """The lowest rate failed, when the search held a rate below it (its last bracket's top)."""
        search = self.result.search
        if self.result.ceiling_rps is None or search is None:
            return None
        return search.failed_rps or None

    @classmethod
    def precision(cls, entries: Sequence[tuple[str, PlanView]]) -> tuple[str, str] | None:
        """A search's precision is its last bracket: each run's held and failed rates."""
        brackets = [
            f"{name} held {rate(view.result.ceiling_rps)} req/s and failed {rate(failed)}"
            for name, view in entries
            if isinstance(view, SearchView)
            and view.result.ceiling_rps is not None
            and (failed := view.bracket()) is not None
        ]
        return (
            "Precision is the search's last bracket.",
            "A ceiling search ends when the lowest rate failed is within its resolution of the "
            "highest held; the limit lies between them"
            + (f" ({'; '.join(brackets)})" if brackets else "")
            + ", and differences smaller than that gap are not real.",
        )
