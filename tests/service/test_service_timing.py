"""Request-time histograms shared between the service's processes (stats.py) and served by /stats."""

from __future__ import annotations

import multiprocessing
import time

import numpy as np
from service_support import Client, seed

from dbladder.histogram import Histogram, bucket_index
from dbladder.service import ServiceConfig, running_service, stats


def _record_in_child(path, values):
    slot = stats.Slot(path, "worker")
    for value in values:
        # No pool wait, `value` us in the database, as much again in the rest.
        slot.timing.record(0.0, value / 1e6, 2 * value / 1e6)
    slot.close()


def _reference(timing: list[tuple[float, float, float]]) -> dict[str, Histogram]:
    """What Histogram.record makes of the same requests, one by one: the slow reference."""
    expected = {name: Histogram() for name in stats.TIMINGS}
    for wait, held, whole in timing:
        expected["pool_wait"].record(int(wait * 1_000_000))
        expected["database"].record(int(held * 1_000_000))
        expected["other"].record(int((whole - wait - held) * 1_000_000))
    return expected


def test_histograms_merge_across_processes_and_survive_their_owner(tmp_path):
    path = tmp_path / "stats"
    stats.create(path, slots=2)
    mine = stats.Slot(path, "worker")
    mine.timing.record(0.000003, 0.0001, 0.00015)
    values = [50, 5000, 70_000]
    child = multiprocessing.get_context("fork").Process(target=_record_in_child, args=(path, values))
    child.start()
    child.join(10)
    # This process has not copied its own in yet; the child did when it closed its slot.
    assert stats.read_timing(path)["database"].count == 3
    merged = mine.timing_snapshot()  # copies this process's first
    expected = _reference([(0.000003, 0.0001, 0.00015)] + [(0.0, v / 1e6, 2 * v / 1e6) for v in values])
    assert merged == expected == stats.read_timing(path)
    assert merged["other"].max == 70_000 and merged["pool_wait"].count == 4
    assert merged["pool_wait"].min == 0 and merged["pool_wait"].max == 3
    # The child is gone: its successor takes its histograms over, so totals never go down.
    successor = stats.Slot(path, "worker")
    assert successor.timing.recorded == 3
    successor.timing.record(0.0, 0.000007, 0.000007)
    successor.close()
    expected["database"].record(7)
    assert stats.read_timing(path)["database"] == expected["database"]
    mine.close()


def test_buffered_requests_file_as_histogram_record_would():
    """The vectorised filing, against Histogram.record one value at a time."""
    micro = [0, 1, 255, 256, 257, 383, 384, 511, 512, 1000, 123_456, 2**32 - 1, 2**32, 2**40]
    micro += [int(1.07**k) for k in range(400)]
    assert stats.bucket_indexes(np.array(micro)).tolist() == [bucket_index(v) for v in micro]
    random = np.random.default_rng(6)
    requests = [
        (float(wait), float(held), float(wait + held + other))
        for wait, held, other in random.lognormal(-9, 2.5, size=(5000, 3))
    ]
    requests += [(0.0, 0.0, 0.0), (0.0, 1e-7, 5e-8)]  # nothing, and "other" rounding below 0
    timing = stats.Timing()
    for request in requests[:2000]:
        timing.record(*request)
    timing.file()  # filing in two batches ends where one would
    for request in requests[2000:]:
        timing.record(*request)
    assert timing.recorded == len(requests)
    assert timing.histograms() == _reference(requests)


def test_an_empty_file_has_empty_histograms(tmp_path):
    path = tmp_path / "stats"
    stats.create(path, slots=1)
    slot = stats.Slot(path, "worker")
    assert all(histogram.count == 0 for histogram in stats.read_timing(path).values())
    slot.close()


def test_stats_serves_the_request_times_of_every_worker(sqlite_url):
    seed(sqlite_url)
    with running_service(ServiceConfig(sqlite_url, port=0, workers=2)) as service:
        clients = [Client(service.config.port) for _ in range(4)]
        for number in range(200):
            status, _ = clients[number % 4].get(f"/products/{1 + number}")
            assert status == 200
        for client in clients:
            client.close()
        assert service.request("GET", "/healthz").status == 200  # not part of the load: not timed
        # The worker answering /stats copies its own histograms in first; the other one copies
        # its own every 0.2 s.
        deadline = time.monotonic() + 5
        body = service.stats()
        while Histogram.from_dict(body["timing"]["other"]).count < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
            body = service.stats()
    assert body["timing_unit"] == "microseconds"
    timing = {name: Histogram.from_dict(data) for name, data in body["timing"].items()}
    assert set(timing) == set(stats.TIMINGS)
    assert all(histogram.count == 200 for histogram in timing.values())
    assert timing["database"].min > 0 and timing["other"].min > 0
    assert timing["pool_wait"].percentile(50) < timing["database"].percentile(50)
