"""The report as Markdown (`dbladder.report.markdown`)."""

from __future__ import annotations

from report_support import fake_result, texts


def test_markdown_cells_escape_pipes():
    result = fake_result()
    result["label"] = "SQLite | tuned"
    md, _ = texts([result])
    assert "SQLite \\| tuned" in md
