"""The verdict in sentences (`dbladder.report.verdicts`)."""

from __future__ import annotations

from report_support import fake_result, texts


def test_the_failed_level_reason_is_in_the_verdict():
    result = fake_result("sqlite", (2, 4, 80))
    assert result["ceiling_rps"] == 1000.0
    md, _ = texts([result])
    assert md.startswith("# SQLite 3.54.1: held 1,000 req/s\n")
    assert "SQLite 3.54.1 held 1,000 req/s; the next level, 1,500 req/s, failed (p95 " in md
