"""Validity flags, and the window averaging they rest on; a fake steal reading raises the flag."""

from __future__ import annotations

import itertools
import time

import pytest

from dbladder.histogram import Histogram
from dbladder.observe import Sampler, database_memory, level_flags, run_flags, summarise
from dbladder.observe.host import HostReading, HostSample
from dbladder.observe.processes import GroupSample
from dbladder.observe.sampler import Sample


class FakeHost:
    """Host readings where each call adds one second of CPU per CPU, `steal_pct` of it stolen."""

    def __init__(self, steal_pct: float, cpus: int = 2):
        self.steal_pct, self.cpus = steal_pct, cpus
        self.calls = itertools.count()

    def __call__(self) -> HostReading:
        n = next(self.calls)
        stolen = self.steal_pct / 100
        seconds = n * self.cpus
        return HostReading(
            cpu_seconds={
                "usr": seconds * (0.5 - stolen),
                "sys": seconds * 0.2,
                "iowait": 0.0,
                "idle": seconds * 0.3,
                "steal": seconds * stolen,
            },
            load1=1.5,
            memory_used=1_000,
            memory_available=9_000,
            disk_write_bytes=n * 4096,
            disk_write_ops=n,
        )


def sampled(host: FakeHost, seconds: float = 0.35) -> tuple[list[Sample], float, float]:
    sampler = Sampler({"service": lambda: []}, interval=0.1, host_reader=host)
    began = time.perf_counter()
    sampler.start()
    time.sleep(seconds)
    samples = sampler.stop()
    return samples, began, time.perf_counter()


def test_a_fake_steal_reading_raises_the_flag():
    samples, began, ended = sampled(FakeHost(steal_pct=7.2))
    summary = summarise(samples, began, ended, requests=100)
    assert summary["host_steal"] == pytest.approx(7.2)
    assert summary["host_usr"] + summary["host_sys"] + summary["host_idle"] + summary["host_steal"] == (
        pytest.approx(100)
    )
    assert level_flags(summary, None) == ["steal 7.2 % > 5 %"]
    assert run_flags(run_summary=summary) == ["steal 7.2 % > 5 %"]


def test_no_steal_no_flag():
    samples, began, ended = sampled(FakeHost(steal_pct=1.0))
    assert level_flags(summarise(samples, began, ended, requests=100), None) == []


def _generator_level(lag_us: list[int], cpu_share: float = 0.3) -> dict:
    lag = Histogram()
    lag.record_many(lag_us)
    return {"schedule_lag": lag.to_dict(), "cpu_share": cpu_share, "wall_seconds": 10.0}


def test_a_generator_that_fell_behind_or_ran_out_of_cpu_is_flagged():
    quiet = {"host_steal": 0.0, "coverage": 1.0}
    assert level_flags(quiet, _generator_level([100] * 99 + [3100])) == []
    assert level_flags(quiet, _generator_level([100] * 90 + [3100] * 10)) == [
        "generator fell behind: schedule lag p99 3.1 ms > 2 ms"
    ]
    assert level_flags(quiet, _generator_level([100], cpu_share=0.97)) == [
        "generator CPU saturated: 97 % of a CPU >= 90 %"
    ]
    # Against the pass mark too: a lag of 3.1 ms is under 10 % of a 250 ms mark, not of a 25 ms one.
    behind = _generator_level([100] * 90 + [3100] * 10)
    assert level_flags(quiet, behind, pass_p95_ms=250) == []
    assert level_flags(quiet, behind, pass_p95_ms=30) == [
        "generator fell behind: schedule lag p99 3.1 ms > 2 ms"
    ]
    # A generator that busy-waits for its due times reads ~100 % at any rate: off on request.
    assert level_flags(quiet, _generator_level([100], cpu_share=0.97), max_generator_cpu_share=None) == []
    # Without the generator's own figure, the sampler's generator group tells, per process.
    sampled_only = {**quiet, "generator_cpu_pct": 190.0, "generator_processes": 2}
    assert level_flags(sampled_only, None) == ["generator CPU saturated: 95 % of a CPU >= 90 %"]


def test_thin_sampling_and_strace_are_flagged():
    flags = level_flags({"coverage": 0.6}, None, syscalls={"tool": "strace", "seconds": 3.0})
    assert flags == ["sampled 60 % of the hold", "strace attached for 3 s: latency inflated"]


def test_run_flags():
    busy = {"idle": False, "busy_pct": 35.2, "busiest": [{"pid": 7, "name": "postgres", "cpu_pct": 20.4}]}
    flags = run_flags(
        busy,
        dataset_bytes=2_100_000_000,
        database_memory_bytes=1_000_000_000,
        levels=[[], ["steal 7.2 % > 5 %"], []],
        database_warning="the postgresql server at 192.0.2.1 is not on this machine",
    )
    assert flags == [
        "machine busy before the run: 35 % CPU (postgres 20 %)",
        "dataset 2.1 GB larger than database memory 1 GB",
        "1 of 3 levels flagged",
        "database CPU not observed: the postgresql server at 192.0.2.1 is not on this machine",
    ]
    assert run_flags({"idle": True, "busy_pct": 2.0}, dataset_bytes=5, database_memory_bytes=None) == []


def test_database_memory_by_engine():
    mariadb = {"engine": "mariadb", "settings": {"innodb_buffer_pool_size": "134217728"}}
    assert database_memory(mariadb, 8_000_000_000) == (134217728, "innodb_buffer_pool_size")
    assert database_memory({"engine": "postgresql"}, 8_000_000_000)[0] == 8_000_000_000
    assert database_memory({"engine": "mariadb", "settings": {}}, 8)[0] is None


# ---------------------------------------------------------------------------------------------
# The window averaging, against a slow reference: integrate second by second


def _sample(end: float, interval: float, cpu_pct: float, vcsw: int) -> Sample:
    host = HostSample(cpu_pct / 2, 0.0, 0.0, 100 - cpu_pct / 2, 0.0, 1.0, 1, 1, 0, 0)
    group = GroupSample(cpu_pct, cpu_pct / 100 * interval, vcsw, 0, 0, 0, 1)
    return Sample(t=end, interval=interval, host=host, groups={"service": group})


def test_a_window_counts_each_sample_by_its_overlap():
    # Intervals (0,1] (1,2] (2,2.5] (2.5,4]: uneven, as a late reading makes them.
    samples = [
        _sample(1, 1, 100, 10),
        _sample(2, 1, 50, 20),
        _sample(2.5, 0.5, 0, 40),
        _sample(4, 1.5, 20, 30),
    ]
    summary = summarise(samples, 0.5, 3.0, requests=10)

    def reference(figure: str) -> float:
        # Step through the window in tiny slices, each taking the value of the sample covering it.
        step, total, t = 0.0005, 0.0, 0.5
        while t < 3.0 - 1e-12:
            middle = t + step / 2
            sample = next(s for s in samples if s.start < middle <= s.t)
            group = sample.groups["service"]
            total += group.cpu_pct * step if figure == "pct" else group.vcsw * step / sample.interval
            t += step
        return total

    assert summary["seconds"] == pytest.approx(2.5)
    assert summary["samples"] == 4
    assert summary["service_cpu_pct"] == pytest.approx(reference("pct") / 2.5, rel=1e-3)
    assert summary["service_vcsw_per_request"] == pytest.approx(reference("vcsw") / 10, rel=1e-3)
    cpu_seconds = reference("pct") / 100
    assert summary["service_cpu_ms_per_1k"] == pytest.approx(cpu_seconds * 1_000_000 / 10, rel=1e-3)
    assert summary["host_usr"] == pytest.approx(summary["service_cpu_pct"] / 2, rel=1e-3)


def test_a_window_without_samples_has_no_figures():
    summary = summarise([_sample(1, 1, 100, 10)], 5.0, 6.0, requests=10)
    assert summary["samples"] == 0 and summary["coverage"] == 0
    assert summary["host_usr"] is None and summary["service_cpu_pct"] is None
    with pytest.raises(ValueError, match="end > start"):
        summarise([], 2.0, 2.0, requests=0)
