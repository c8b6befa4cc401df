"""A managed server killed for memory during the load: the run says so in one line, flags the level
it struck and keeps the levels finished before it (servers/watch.py, run/levels.py).

The kill is made on purpose, on a throwaway managed PostgreSQL under the smallest cap: once the
first level has reported, a connection of the test's own sorts some 5 M rows in one backend with a
work_mem that lets it try in memory, and the kernel kills that backend inside the server's cgroup
while the second level runs."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from typing import Any

import pytest
from managed_support import require_programs

from dbladder.engines import EngineOptions, opened
from dbladder.plans import Ladder
from dbladder.result.schema import RESULT_SCHEMA, problem
from dbladder.roles import Placement, RoleLimits, memory_problem
from dbladder.run.config import RunConfig
from dbladder.run.progress import QuietProgress
from dbladder.run.round import run_round
from dbladder.servers import ServerLost

CAP = 128 << 20  # the floor of --memory
# Far more than the cap in one backend's sort: 5 M rows of a bigint and 100 bytes of text.
HOG = (
    "SELECT count(*) FROM (SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 5000000) g "
    "ORDER BY g DESC OFFSET 0) s"
)
PLAN = Ladder(20, 20, 4, 4.0, warmup=0.5)


class KillAfterFirstLevel(QuietProgress):
    """Finds the managed server's URL in the run's messages and, when the first level reports,
    starts the memory hog on it in a thread of its own."""

    def __init__(self) -> None:
        self.url: str | None = None
        self.levels = 0
        self.hog: threading.Thread | None = None
        self.hog_error: BaseException | None = None

    def message(self, text: str) -> None:
        found = re.search(r"server \S+ on (postgresql://\S+)", text)
        if found:
            self.url = found.group(1)

    def level(self, row: dict[str, Any]) -> None:
        self.levels += 1
        if self.levels == 1 and self.url is not None:
            self.hog = threading.Thread(target=self._hog, daemon=True)
            self.hog.start()

    def _hog(self) -> None:
        async def sort() -> None:
            assert self.url is not None
            async with opened(self.url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
                await session.fetch_one(HOG)

        try:
            asyncio.run(sort())
        except BaseException as exc:  # the backend killed: the error this thread expects
            self.hog_error = exc


@pytest.mark.slow
def test_a_server_killed_for_memory_is_one_line_with_its_level_flagged_and_the_levels_before_kept(
    tmp_path,
) -> None:
    if (why := memory_problem()) is not None:
        pytest.skip(why)
    require_programs("postgresql")
    progress = KillAfterFirstLevel()
    config = RunConfig(
        db_url="managed:postgresql?shared_buffers=16MB&work_mem=2GB",
        plan=PLAN,
        write_share=0.0,
        sizes={"products": 1_000, "orders": 1_000},
        target="direct",
        pool_size=2,
        out_dir=tmp_path / "run",
        placement=Placement(database=RoleLimits(memory=CAP)),
        integrity=False,
    )
    with pytest.raises(ServerLost) as caught:
        run_round(config, progress)
    assert progress.hog is not None
    progress.hog.join(30)
    assert progress.hog_error is not None  # the sort never finished: its backend was killed
    message = str(caught.value)
    assert "\n" not in message
    assert re.fullmatch(
        r"level [23]: the managed PostgreSQL server postgresql-\d+ was killed for memory: the kernel "
        r"killed 1 of its processes for passing its cap of 128M \(--memory database=\.\.\.; its "
        r"cgroup's oom_kill count went from 0 to 1\); the levels finished before it are in \S+result\.json",
        message,
    ), message
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert problem(result, RESULT_SCHEMA) is None
    assert result["status"] == "database lost"
    assert result["stopped_because"] == message.split("; the levels finished")[0]
    # Killed during the second level (or, on a slow machine, the third): the ones before it kept
    # and unflagged, the one it struck flagged and last.
    *before, struck = result["levels"]
    assert before and len(result["levels"]) == int(message.split(":")[0].split()[1])
    for level in before:
        assert not any("killed for memory" in flag for flag in level["flags"]), level["flags"]
    assert struck["flags"][-1] == result["stopped_because"]
