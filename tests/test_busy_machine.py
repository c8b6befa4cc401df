"""The busy-machine rule of the serial tests (tests/busy_machine.py), on real processes: a failing
serial test beside two processes burning both cores is skipped with the figures; the same test on
the machine as it is fails; an error that is not an assertion fails however busy the machine; a
test not marked serial is never judged."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

INNER = textwrap.dedent(
    """
    import time
    import pytest

    @pytest.mark.serial
    def test_a_figure():
        time.sleep(1.5)
        assert 1 == 2, "the figure was off"

    @pytest.mark.serial
    def test_a_crash():
        time.sleep(1.5)
        raise RuntimeError("not a figure")

    def test_not_serial():
        time.sleep(1.5)
        assert 1 == 2
    """
)


def burners(count: int, seconds: float) -> list[int]:
    """`count` processes that each burn a core for at most `seconds`, started through a shell
    that exits at once, so they are not this test's descendants (as another user's work is not)."""
    # Real line breaks inside the shell's double quotes: python -c reads them as the program's.
    script = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    shell = " ".join(f'{sys.executable} -c "{script}" >/dev/null 2>&1 & echo $!;' for _ in range(count))
    started = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, check=True)
    return [int(pid) for pid in started.stdout.split()]


def run_inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent))  # where busy_machine is
    pytester.makeini("[pytest]\nmarkers =\n    serial: a figure\n")
    pytester.makepyfile(test_inner=INNER)
    return pytester.runpytest_subprocess("-p", "busy_machine", "-ra", "-p", "no:cacheprovider")


@pytest.mark.slow
@pytest.mark.serial
def test_a_failing_figure_beside_two_burning_cores_is_skipped_with_the_figures(pytester, monkeypatch):
    pids = burners(2, 8.0)
    try:
        time.sleep(0.3)
        result = run_inner(pytester, monkeypatch)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped") == 1 and outcomes.get("failed") == 2, result.stdout.str()
    line = next(line for line in result.stdout.lines if line.startswith("SKIPPED"))
    assert "test_inner.py" in line and "the machine was busy with other work during this test" in line
    assert "It failed: AssertionError: the figure was off" in line
    # Two burners on a 2-core machine, the test itself asleep: most of both cores were other work.
    cores = float(line.split("busy with other work during this test: ")[1].split(" of ")[0])
    assert cores >= 1.0, line


@pytest.mark.slow
@pytest.mark.serial
def test_on_the_machine_as_it_is_a_failing_figure_fails(pytester, monkeypatch):
    result = run_inner(pytester, monkeypatch)
    assert result.parseoutcomes().get("failed") == 3, result.stdout.lines[-1]
