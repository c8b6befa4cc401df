"""The report as one HTML page (`dbladder.report.html`)."""

from __future__ import annotations

from report_support import fake_result, texts


def test_the_page_keeps_its_inline_marks_and_escapes_everything_else():
    result = fake_result()
    result["label"] = "<script>alert(1)</script>"
    _, page = texts([result])
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<strong>One run.</strong>" in page
