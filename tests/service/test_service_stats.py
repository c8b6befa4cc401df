"""Counters shared between processes."""

from __future__ import annotations

import multiprocessing

from dbladder.service import stats


def _count_in_child(path, amount):
    slot = stats.Slot(path, "worker")
    slot.add("busy_waits", amount)
    slot.close()


def test_slots_sum_across_processes_and_survive_their_owner(tmp_path):
    path = tmp_path / "stats"
    stats.create(path, slots=2)
    mine = stats.Slot(path, "writer")
    mine.add("requests", 5)
    mine.flush()
    child = multiprocessing.get_context("fork").Process(target=_count_in_child, args=(path, 7))
    child.start()
    child.join(10)
    processes = stats.read(path)
    assert {p.role for p in processes} == {"writer", "worker"}
    assert stats.totals(processes)["busy_waits"] == 7
    assert stats.totals(processes)["requests"] == 5
    # The child is gone: a new process takes its slot over together with its counts.
    successor = stats.Slot(path, "worker")
    assert successor.claimed and successor.values["busy_waits"] == 7
    successor.close()
    mine.close()


def test_a_process_without_a_free_slot_counts_privately(tmp_path):
    path = tmp_path / "stats"
    stats.create(path, slots=1)
    first = stats.Slot(path, "worker")
    second = stats.Slot(path, "worker")  # same (live) pid holds the only slot
    assert first.claimed and not second.claimed
    second.add("requests")
    second.flush()
    assert stats.totals(stats.read(path))["requests"] == 0
    first.close()
    second.close()
