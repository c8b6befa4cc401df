"""The terminal's view of a run (`dbladder.report.terminal`)."""

from __future__ import annotations

from report_support import spike_result

from dbladder.report import terminal


def test_the_terminal_summary_of_a_spike_shows_its_phases():
    text = terminal.summary(spike_result())
    assert "phases   195 / 1,500 / 198 req/s" in text
    assert "recovery p95 back within 20 % after 2 s" in text
    assert "ceiling" not in text
