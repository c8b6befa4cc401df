"""The published figures of "SQLite handled 315 million daily requests on a laptop" (DB Pro's Chirp:
Node 22, better-sqlite3, SQLite 3.49.2, Apple M1), printed beside ours. Their hardware, not ours:
compare shapes and ratios, not absolutes."""

from __future__ import annotations

from typing import Any

RAW_ROUNDS: dict[str, int] = {
    "point_reads": 232_011,  # ops/s
    "write_transactions": 23_459,  # committed transactions/s, one post each
    "batched_inserts": 32_217,  # rows/s
}

# 7 reader threads on timelines + 1 writer.
JOURNAL: dict[tuple[str, str], dict[str, Any]] = {
    ("WAL", "writer at 1,000/s"): {"reads_per_s": 2_792, "read_p99_ms": 4.40, "busy_errors": 0},
    ("DELETE", "writer at 1,000/s"): {"reads_per_s": 497, "read_p99_ms": 133.85, "read_max_ms": 794},
    ("WAL", "writer flat out"): {"reads_per_s": 2_854},
    ("DELETE", "writer flat out"): {"reads_per_s": 227},
    # The clean read-only figure; the post does not say in which journal mode.
    ("*", "readers only"): {"reads_per_s": 17_581},
}
