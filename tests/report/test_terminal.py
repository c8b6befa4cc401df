"""The terminal's view of a run (`dbladder.report.terminal`)."""

from __future__ import annotations

from report_support import spike_result

from dbladder.report import terminal


def test_the_terminal_summary_of_a_spike_shows_its_phases():
    text = terminal.summary(spike_result())
    assert "phases   195 / 1,500 / 198 req/s" in text
    assert "recovery p95 back within 20 % after 2 s" in text
    assert "ceiling" not in text


def test_an_app_run_that_never_got_an_answer_still_prints_its_request_line():
    # Every request of every level refused (a redirect the request file did not expect): the app
    # used CPU, but there is no cost per 1,000 answers to print.
    level = {"passed": False, "offered_rps": 2.0, "operations": {}, "machine": {"service_cpu_pct": 3.2}}
    result = {"app": {"command": "gunicorn site.wsgi"}, "levels": [level]}
    assert terminal.request_lines(result) == ["requests at 2 req/s: none answered; the app's CPU 3 %"]
