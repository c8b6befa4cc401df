"""The price of a round trip, as the reports show it: queries per request, and what they cost.

"PostgreSQL vs SQLite, 2026 edition" saw SQLite win the endpoints that send many small queries per
request and guessed why: "Each of those sub-queries pays the TCP round-trip cost on PostgreSQL"
("We did not isolate this"). These sections answer from what the runs recorded:

* Queries per request: for a workload that counts what it sends (`levels[].queries`), two
  columns of each level's per-operation table (`query_cells`), and how each engine was reached.
* Round trips (a comparison whose entries differ in transport or added latency, or in engine):
  - the routes: each entry's transport, added latency, and what one round trip (`SELECT 1`)
    took over it just before the load (`transport.round_trip_us`);
  - the cost per round trip derived from the runs: between two entries of one engine, the
    difference of an operation's p50 divided by its round trips per request; over all
    operations, the least-squares slope of the differences against the round trips. TCP against
    the Unix socket, the relay at 0 ms against none (the relay's own cost), and the relay at MS
    against 0 ms (which should come out near 2 x MS, plus the relay's measured lateness);
  - the engine gap: between two engines, how much of an operation's p50 difference the round
    trips account for (round trips per request x the round trip measured over that route), and a
    sentence saying whether they explain it.

Figures are taken at each run's first level (the lightest load, where queueing adds least), the
median over an entry's runs. Everything is read from the results; nothing is measured here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine_registry import label_of, runs_in_process
from ..result.context import RelayForwarded, RelayRecord, RoundTrips, RoundTripSpread
from ..result.level import Level
from ..result.run import Transport
from .blocks import Block, Bullets, Heading, Paragraph, TableBlock, TableColumn
from .runs import Group, Round, RunInRound

EXPLAINED = 0.8  # round trips account for at least this share of a gap: "explained"
PARTLY = 0.3  # at least this share: "partly explained"


def _first_level(run: RunInRound) -> Level | None:
    levels = run.levels
    return levels[0] if levels else None


def _median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class RouteEntry:
    """One group of a round (an engine label) as this section reads it: its route and first-level figures."""

    label: str
    engine: str
    transport: str | None
    latency: float | None  # ms added each way by the relay; None: no relay
    round_trip_us: float | None  # SELECT 1 over the transport, before the load (median over runs)
    relay_round_trip_us: float | None  # the same through the relay
    late_us: float | None  # the relay's mean lateness per held chunk
    p50: dict[str, float] = field(default_factory=dict)  # per operation, ms
    trips: dict[str, float] = field(default_factory=dict)  # round trips per request
    statements: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return label_of(self.engine)

    @property
    def route(self) -> str:
        words = self.transport or "?"
        if self.latency is not None:
            words += f" + {self.latency:g} ms"
        return words

    @property
    def in_process(self) -> bool:
        return self.transport == "inproc"


def _median_of(spread: RoundTripSpread | None) -> float | None:
    return spread.median if spread is not None else None


def entry_of(group: Group) -> RouteEntry:
    """A group's route and the medians of its runs' first-level figures."""
    results = [run.result for run in group.runs]
    first = results[0]
    transport = first.transport or Transport(added_latency_ms=None)
    engine = str((first.engine.engine if first.engine else None) or "?")
    relays = [(r.transport.relay if r.transport else None) or RelayRecord() for r in results]
    relay_stats = [relay.stats or RelayForwarded() for relay in relays]
    probes = [(r.transport.round_trip_us if r.transport else None) or RoundTrips() for r in results]
    entry = RouteEntry(
        label=group.label,
        engine=engine,
        transport=transport.transport or ("inproc" if runs_in_process(engine) else None),
        latency=_number(transport.added_latency_ms),
        round_trip_us=_median([v for p in probes if (v := _number(_median_of(p.direct)))]),
        relay_round_trip_us=_median([v for p in probes if (v := _number(_median_of(p.through_relay)))]),
        late_us=_median([v for s in relay_stats if (v := _number(s.mean_late_us)) is not None]),
    )
    p50s: dict[str, list[float]] = {}
    trips: dict[str, list[float]] = {}
    statements: dict[str, list[float]] = {}
    for run in group.runs:
        level = _first_level(run)
        if level is None:
            continue
        for name, figures in (level.operations or {}).items():
            if figures.requests:
                p50s.setdefault(name, []).append(float(figures.p50_ms))
        for name, counted in (level.queries or {}).items():
            if (value := _number(counted.round_trips_per_request)) is not None:
                trips.setdefault(name, []).append(value)
            if (value := _number(counted.statements_per_request)) is not None:
                statements.setdefault(name, []).append(value)
    entry.p50 = {name: float(statistics.median(values)) for name, values in p50s.items()}
    entry.trips = {name: float(statistics.median(values)) for name, values in trips.items()}
    entry.statements = {name: float(statistics.median(values)) for name, values in statements.items()}
    return entry


# ---------------------------------------------------------------------------------------------
# Queries per request, per run and level


QUERY_COLUMNS = (TableColumn("statements / request"), TableColumn("round trips / request"))
"""The per-operation table's columns for a workload that counts its queries (`query_cells`)."""


def query_cells(level: Level, operation: str) -> tuple[str, str]:
    """An operation's statements and round trips per request in a level, or "-" where not counted."""
    counted = (level.queries or {}).get(operation)
    if counted is None:
        return _ratio(None), _ratio(None)
    return _ratio(counted.statements_per_request), _ratio(counted.round_trips_per_request)


def queries_section(rounds: Sequence[Round]) -> list[Block]:
    """What the per-operation tables' query columns mean, and how each engine was reached."""
    runs = [
        run for round_ in rounds for run in round_.runs if any(lv.queries is not None for lv in run.levels)
    ]
    if not runs:
        return []
    blocks: list[Block] = [
        Heading(2, "Queries per request"),
        Paragraph(
            "The per-operation tables above show what each operation sent to the database, counted "
            "as it sent it (not estimated): SQL statements per request, and round trips per request "
            "(the statements, and BEGIN, COMMIT and ROLLBACK where the driver sends them as messages "
            "of their own; none in-process), counted over each level's measured window."
        ),
    ]
    layers = _data_layers(runs)
    if layers:
        blocks += [Paragraph("The operations reached each engine through:"), Bullets(layers)]
    return blocks


def _data_layers(runs: Sequence[RunInRound]) -> list[str]:
    found: dict[str, str] = {}
    for run in runs:
        layer = run.result.workload.data_layer if run.result.workload else None
        engine = str((run.result.engine.engine if run.result.engine else None) or "?")
        if layer and engine not in found:
            parts = [layer.orm, layer.driver]
            words = ", ".join(str(part) for part in parts if part)
            if layer.note:
                words += f": {layer.note}"
            found[engine] = f"**{label_of(engine)}** through {words}."
    return list(found.values())


def _ms(value: Any) -> str:
    number = _number(value)
    return "-" if number is None else (f"{number:.1f}" if number < 100 else f"{number:,.0f}")


def _ratio(value: Any) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:.1f}"


def microseconds(value: float | None) -> str:
    """Microseconds as the report writes them: whole numbers from 100 up, one decimal below."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"


# ---------------------------------------------------------------------------------------------
# Round trips across the entries of a comparison


@dataclass(frozen=True)
class Derived:
    """A cost per round trip derived from two entries of one engine."""

    entry: RouteEntry
    against: RouteEntry
    what: str  # what the difference isolates, in words
    by_operation: dict[str, float]  # us per round trip, per operation with round trips
    fit_us: float | None  # the slope over all of them
    expected_us: float | None  # what it should be, when the entries say (added latency)
    probe_us: float | None  # the same difference, of `SELECT 1` measured before each load


def baseline(entry: RouteEntry, entries: Sequence[RouteEntry]) -> tuple[RouteEntry, str] | None:
    """The entry `entry` is best compared with, and what their difference isolates.

    The relay at MS against the relay at 0 ms (the added latency alone), the relay at 0 ms
    against none (the relay's own cost), another transport against the Unix socket.
    """
    same = [other for other in entries if other is not entry and other.engine == entry.engine]

    def find(transport: str | None, latency: float | None) -> RouteEntry | None:
        return next((o for o in same if o.transport == transport and o.latency == latency), None)

    if entry.latency is not None and entry.latency > 0:
        zero = find(entry.transport, 0.0)
        if zero is not None:
            return zero, f"{entry.latency:g} ms added each way"
        bare = find(entry.transport, None)
        return (bare, f"the relay with {entry.latency:g} ms each way") if bare else None
    if entry.latency == 0:
        bare = find(entry.transport, None)
        return (bare, "the relay's own cost") if bare else None
    if entry.transport not in (None, "unix", "inproc"):
        unix = find("unix", None)
        return (unix, f"{entry.transport} instead of the Unix socket") if unix else None
    return None


def derive(entry: RouteEntry, against: RouteEntry, what: str) -> Derived | None:
    """The p50 difference per round trip of each operation both entries ran, and their slope."""
    points = []
    by_operation = {}
    for name, trips in entry.trips.items():
        if trips <= 0 or name not in entry.p50 or name not in against.p50:
            continue
        delta_us = (entry.p50[name] - against.p50[name]) * 1000
        by_operation[name] = delta_us / trips
        points.append((trips, delta_us))
    if not points:
        return None
    squares = sum(trips * trips for trips, _ in points)
    fit = sum(trips * delta for trips, delta in points) / squares if squares else None
    expected = None
    if entry.latency is not None and entry.latency > 0:
        # A round trip gains the added latency twice (one chunk each way), and each held chunk
        # leaves a little late: the relay's own record of that lateness.
        added = entry.latency - (against.latency or 0.0)
        lateness = 2 * ((entry.late_us or 0.0) - (against.late_us or 0.0))
        expected = 2 * added * 1000 + lateness
    probe = _probe(entry)
    against_probe = _probe(against)
    probe_difference = None if probe is None or against_probe is None else probe - against_probe
    return Derived(entry, against, what, by_operation, fit, expected, probe_difference)


def _probe(entry: RouteEntry) -> float | None:
    """The round trip the load took, measured before it: through the relay when there was one."""
    return entry.round_trip_us if entry.latency is None else entry.relay_round_trip_us


@dataclass(frozen=True)
class Gap:
    """Two engines on one operation: the one that sends more round trips (`chatty`) against the other,
    the p50 difference, and what the round trips account for."""

    operation: str
    chatty: RouteEntry  # more round trips per request (a server, against SQLite in-process)
    other: RouteEntry
    gap_ms: float  # chatty's p50 minus the other's: above 0 when the chatty one is slower
    round_trip_ms: float | None  # chatty's round trips x its round trip, less the other's

    @property
    def share(self) -> float | None:
        """The share of the gap the round trips account for; None when there is no gap to explain."""
        if self.round_trip_ms is None or self.gap_ms <= 0:
            return None
        return self.round_trip_ms / self.gap_ms


def _round_trip_ms(entry: RouteEntry, operation: str) -> float | None:
    trips = entry.trips.get(operation)
    if trips is None:
        return None
    if trips == 0:
        return 0.0
    return None if entry.round_trip_us is None else trips * entry.round_trip_us / 1000


def gaps(first: RouteEntry, second: RouteEntry) -> list[Gap]:
    """Per operation both ran and counted: the gap between them and the round trips' part of it."""
    found = []
    for name in sorted(first.p50.keys() & second.p50.keys() & first.trips.keys() & second.trips.keys()):
        chatty, other = (first, second) if first.trips[name] >= second.trips[name] else (second, first)
        mine, theirs = _round_trip_ms(chatty, name), _round_trip_ms(other, name)
        part = None if mine is None or theirs is None else mine - theirs
        found.append(Gap(name, chatty, other, chatty.p50[name] - other.p50[name], part))
    return found


def gap_sentence(found: Sequence[Gap]) -> str | None:
    """Whether round trips explain the gap, said of the operation with the most round trips."""
    counted = [gap for gap in found if gap.round_trip_ms is not None]
    if not counted:
        return None
    key = max(counted, key=lambda gap: gap.chatty.trips[gap.operation] - gap.other.trips[gap.operation])
    chatty, other = key.chatty, key.other
    trips = chatty.trips[key.operation]
    cost = (
        f"{trips:.0f} round trips a request at the {microseconds(chatty.round_trip_us)} us one took over "
        f"{chatty.route} before the load: {key.round_trip_ms:.1f} ms"
    )
    if other.trips[key.operation]:
        cost += f" more than {other.label}'s {other.trips[key.operation]:.0f}"
    head = f"{key.operation}, {chatty.label} against {other.label}"
    share = key.share
    if share is None:
        faster = "faster" if key.gap_ms < 0 else "no slower"
        return (
            f"{head}: {chatty.label} was {faster} at p50 ({-key.gap_ms:.1f} ms) despite its {cost}: "
            "there is no gap for round trips to explain."
        )
    if share >= EXPLAINED:
        verdict = f"the gap is explained by round trips ({share:.0%} of it)"
    elif share >= PARTLY:
        verdict = (
            f"round trips explain part of the gap ({share:.0%}); the rest is work per statement in the "
            "driver, the ORM or the server, or waiting"
        )
    else:
        verdict = (
            f"round trips do not explain the gap ({share:.0%} of it); it is work per statement in the "
            "driver, the ORM or the server, or waiting"
        )
    return f"{head}: {key.gap_ms:.1f} ms slower at p50; {cost}; {verdict}."


def round_trip_section(rounds: Sequence[Round]) -> list[Block]:
    """The routes, the derived cost per round trip, and the engine gap, for each comparison round."""
    blocks: list[Block] = []
    for round_ in rounds:
        if len(round_.groups) < 2:
            continue
        entries = [entry_of(group) for group in round_.groups]
        if not any(entry.trips for entry in entries):
            continue
        if not blocks:
            blocks.append(Heading(2, "Round trips"))
            blocks.append(Paragraph(_WORDS))
        if len(rounds) > 1:
            blocks.append(Heading(3, round_.title))
        blocks.append(_routes_table(entries))
        derived = [
            one
            for entry in entries
            if (pair := baseline(entry, entries)) is not None
            and (one := derive(entry, pair[0], pair[1])) is not None
        ]
        if derived:
            blocks.append(_derived_table(derived))
            blocks.append(Bullets([_derived_sentence(one) for one in derived]))
        sentences = []
        rows = []
        for i, first in enumerate(entries):
            for second in entries[i + 1 :]:
                if first.engine == second.engine or first.latency is not None or second.latency is not None:
                    continue
                pair_gaps = gaps(first, second)
                rows += [_gap_row(gap) for gap in pair_gaps]
                if (sentence := gap_sentence(pair_gaps)) is not None:
                    sentences.append(sentence)
        if rows:
            blocks.append(_gap_table(rows))
        if sentences:
            blocks.append(Bullets(sentences))
    return blocks


_WORDS = (
    "Each entry's route, and what one round trip (`SELECT 1` on one connection) took over it just "
    "before the load. The cost per round trip is derived from the runs: between two entries of one "
    "engine, the difference of an operation's p50 (first level, median over the runs) divided by its "
    'round trips per request; "all" is the least-squares slope over every operation, and "SELECT 1" '
    "the same difference of the round trips measured before the loads. Added latency "
    "is compared with the relay at 0 ms, so the relay's own cost cancels; a round trip through it "
    "should gain twice the added latency, plus the relay's measured lateness."
)


def _routes_table(entries: Sequence[RouteEntry]) -> TableBlock:
    columns = [
        TableColumn("entry", numeric=False),
        TableColumn("transport", numeric=False),
        TableColumn("added ms each way"),
        TableColumn("round trip us"),
        TableColumn("through the relay us"),
        TableColumn("relay late us a chunk"),
    ]
    rows = [
        [
            entry.label,
            entry.transport or "-",
            "-" if entry.latency is None else f"{entry.latency:g}",
            microseconds(entry.round_trip_us),
            microseconds(entry.relay_round_trip_us),
            microseconds(entry.late_us),
        ]
        for entry in entries
    ]
    return TableBlock(columns, rows, kind="routes")


def _derived_table(derived: Sequence[Derived]) -> TableBlock:
    operations = sorted({name for found in derived for name in found.by_operation})
    columns = [
        TableColumn("entry", numeric=False),
        TableColumn("against", numeric=False),
        TableColumn("isolates", numeric=False),
        *(TableColumn(f"{name} us") for name in operations),
        TableColumn("all us"),
        TableColumn("SELECT 1 us"),
        TableColumn("expected us"),
    ]
    rows = [
        [
            found.entry.label,
            found.against.label,
            found.what,
            *(microseconds(found.by_operation.get(name)) for name in operations),
            microseconds(found.fit_us),
            microseconds(found.probe_us),
            microseconds(found.expected_us),
        ]
        for found in derived
    ]
    return TableBlock(columns, rows, kind="round-trips")


def _derived_sentence(found: Derived) -> str:
    text = (
        f"{found.entry.label} against {found.against.label} ({found.what}): "
        f"{microseconds(found.fit_us)} us per round trip"
    )
    if found.probe_us is not None:
        text += f" (`SELECT 1` before the load: {microseconds(found.probe_us)} us)"
    if found.expected_us is not None and found.fit_us is not None and found.expected_us > 0:
        share = found.fit_us / found.expected_us
        text += (
            f", {share:.0%} of the {microseconds(found.expected_us)} us expected from the added latency "
            "and the relay's lateness"
        )
    return text + "."


def _gap_row(gap: Gap) -> list[str]:
    share = gap.share
    name = gap.operation
    return [
        name,
        f"{gap.chatty.label} / {gap.other.label}",
        _ms(gap.chatty.p50.get(name)),
        _ms(gap.other.p50.get(name)),
        f"{gap.gap_ms:+.1f}",
        _ratio(gap.chatty.trips.get(name)),
        _ratio(gap.other.trips.get(name)),
        "-" if gap.round_trip_ms is None else f"{gap.round_trip_ms:.1f}",
        "-" if share is None else f"{share:.0%}",
    ]


def _gap_table(rows: list[list[str]]) -> TableBlock:
    columns = [
        TableColumn("operation", numeric=False),
        TableColumn("entries", numeric=False),
        TableColumn("p50 ms (first)"),
        TableColumn("p50 ms (second)"),
        TableColumn("gap ms"),
        TableColumn("round trips (first)"),
        TableColumn("round trips (second)"),
        TableColumn("their cost ms"),
        TableColumn("share of the gap"),
    ]
    return TableBlock(columns, rows, kind="engine-gap")
