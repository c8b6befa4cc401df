"""A direct-mode result beside the database's own speed: the `native` block in one sentence.

`dbladder bench --native --result` measures the engine's native client (a bare apsw loop, pgbench,
sysbench) on the shop's read mix, flat out, on the run's database, and writes the block into the
run's result.json; the report's result section then says how close direct mode came to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..result.context import NativeReference, RolePlacement
from ..result.run import RunResult, as_result
from . import figures as fig
from .plan_views import view_of
from .runs import Round

_CLIENT_WORDS = {
    # client -> how its settings read after its version
    "apsw loop": "a bare loop in {processes} process(es)",
    "pgbench": "-M prepared, {connections} connections on {processes} thread(s)",
    "sysbench": "prepared statements, {connections} threads",
}


def client_words(block: NativeReference | Mapping[str, Any]) -> str:
    """The native client as the sentence names it: "pgbench (PostgreSQL) 15.20, -M prepared, 8 ..."."""
    block = block if isinstance(block, NativeReference) else NativeReference.from_json(block)
    settings = _CLIENT_WORDS.get(str(block.client), "{connections} connections")
    return f"{block.version or block.client}, " + settings.format(
        processes=block.processes, connections=block.connections
    )


def ratio_words(ratio: float) -> str:
    """A ratio to two decimals, or two significant figures below 0.1 (0.019, not 0.02)."""
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.2g}"


def native_sentence(result: RunResult | Mapping[str, Any]) -> str | None:
    """ "Direct mode reached X req/s, Y of the native client's Z ops/s flat out (client ...)"; None
    when the result carries no native reference."""
    result = as_result(result)
    block = result.native
    if not isinstance(block, NativeReference):
        return None
    native = f"the native client's {fig.rate(block.ops_per_s)} ops/s flat out"
    measured = (
        f"({client_words(block)}; {fig.plain(round(float(block.seconds or 0), 1))} s on the same "
        f"database, "
        f"{str(block.measured_at or '')[:10]})"
    )
    direct, ratio = block.direct_rps, block.ratio
    where = _where(result, block)
    if direct is None or ratio is None:
        return f"Direct mode held no level; {native} {measured}.{where}"
    # No level failed: the ceiling is where the plan ended, so the ratio is a lower bound too.
    bound = view_of(result).lower_bound
    at_least = "at least " if bound else ""
    return (
        f"Direct mode reached {at_least}{fig.rate(direct)} req/s{' (no level failed)' if bound else ''}, "
        f"{at_least}{ratio_words(ratio)} of {native} {measured}.{where}"
    )


def _where(result: RunResult, block: NativeReference) -> str:
    """On which CPUs each side ran (`--cpus`), as a sentence after the figures; '' when unpinned."""
    placement = result.placement or RolePlacement()
    generator = placement.of("generator").cpus
    database = placement.of("database").cpus
    client = block.cpus
    if not (generator or database or client):
        return ""
    parts = [
        f"direct mode's generator on {f'CPU {generator}' if generator else 'any CPU'}",
        f"the native client on {f'CPU {client}' if client else 'any CPU'}",
        f"the database on {f'CPU {database}' if database else 'any CPU'}",
    ]
    return " Placed: " + ", ".join(parts) + "."


def native_lines(round_: Round) -> list[str]:
    """The sentence of every run of a round that carries a native reference, named when there are several."""
    lines = []
    for run in round_.runs:
        sentence = native_sentence(run.result)
        if sentence:
            lines.append(sentence if len(round_.runs) == 1 else f"**{run.name}.** {sentence}")
    return lines
