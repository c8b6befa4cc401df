"""A level's seconds as result rows, read back for the diagnosis, and set beside the machine's samples."""

from __future__ import annotations

from dbladder.histogram import Histogram
from dbladder.result.diagnosis import Second
from dbladder.result.seconds import beside_samples, diagnosis_seconds, second_rows


def merged_second(
    sent: int, answered: int, failed: int, latencies_ms: list[float], lag_us: int = 0, length: float = 1.0
) -> dict:
    histogram = Histogram()
    for ms in latencies_ms:
        histogram.record(int(ms * 1000))
    return {
        "length_s": length,
        "sent": sent,
        "dropped": 0,
        "answered": answered,
        "failed": failed,
        "lag_max_us": lag_us,
        "latency_from_due": histogram.to_dict(),
    }


def test_each_second_keeps_its_counts_and_percentiles_and_an_empty_one_has_none():
    rows = second_rows([merged_second(10, 9, 1, [1.0] * 9 + [100.0], 2500), merged_second(0, 3, 0, [])])
    assert rows[0] | {"p50_ms": round(rows[0]["p50_ms"])} == {
        "t": 0,
        "length_s": 1.0,
        "sent": 10,
        "dropped": 0,
        "answered": 9,
        "failed": 1,
        "p50_ms": 1,
        "p95_ms": rows[0]["p95_ms"],
        "p99_ms": rows[0]["p99_ms"],
        "max_ms": 100.0,
        "lag_max_ms": 2.5,
    }
    assert 99 <= rows[0]["p95_ms"] <= 101
    assert rows[1] == {
        "t": 1,
        "length_s": 1.0,
        "sent": 0,
        "dropped": 0,
        "answered": 3,
        "failed": 0,
        "p50_ms": None,
        "p95_ms": None,
        "p99_ms": None,
        "max_ms": None,
        "lag_max_ms": 0.0,
    }
    assert diagnosis_seconds(rows)[1] == Second(0, 3, 0, None, None)
    assert diagnosis_seconds(rows)[0].max_ms == 100.0


def test_a_sample_gets_the_level_second_its_middle_falls_in():
    levels = [
        {
            "index": 0,
            "start_s": 0.0,
            "warmup_s": 1.0,
            "seconds": second_rows([merged_second(5, 5, 0, [2.0])] * 2),
        },
        {
            "index": 1,
            "start_s": 3.0,
            "warmup_s": 1.0,
            "seconds": second_rows([merged_second(7, 7, 0, [3.0])] * 2),
        },
    ]
    samples = [{"t": t, "interval": 1.0} for t in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)]
    joined = beside_samples(samples, levels)
    assert [(row.get("level"), row.get("level_second")) for row in joined] == [
        (None, None),
        (1, 0),
        (1, 1),
        (None, None),
        (2, 0),
        (2, 1),
        (None, None),
    ]
    assert joined[4]["load_sent"] == 7 and joined[1]["load_p95_ms"] == 2.0


def test_a_part_second_keeps_its_length_and_an_older_snapshot_reads_as_whole_seconds():
    rows = second_rows([merged_second(10, 10, 0, [1.0]), merged_second(4, 4, 0, [1.0], length=0.4)])
    assert [row["length_s"] for row in rows] == [1.0, 0.4]
    assert [second.length for second in diagnosis_seconds(rows)] == [1.0, 0.4]
    older = {
        key: value
        for key, value in merged_second(10, 10, 0, [1.0]).items()
        if key not in ("length_s", "dropped")
    }
    assert (second_rows([older])[0]["length_s"], second_rows([older])[0]["dropped"]) == (1.0, None)


def test_a_sample_whose_middle_is_past_a_part_second_is_in_no_level_second():
    # A window of 1.5 s from t = 1: second 0 is [1, 2), the part-second [2, 2.5).
    level = {
        "index": 0,
        "start_s": 0.0,
        "warmup_s": 1.0,
        "seconds": second_rows([merged_second(10, 10, 0, [2.0]), merged_second(5, 5, 0, [2.0], length=0.5)]),
    }
    samples = [{"t": t, "interval": 0.4} for t in (2.4, 2.8)]  # middles 2.2 and 2.6
    joined = beside_samples(samples, [level])
    assert (joined[0]["level_second"], joined[0]["load_length_s"]) == (1, 0.5)
    assert "level_second" not in joined[1]
