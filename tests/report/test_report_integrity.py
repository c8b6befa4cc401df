"""The integrity check in words (dbladder.report.integrity): the terminal's line."""

from __future__ import annotations

from dbladder.report.integrity import integrity_line

CHECKED = {
    "checked": True,
    "acknowledged": 1234,
    "present": 1234,
    "lost": 0,
    "corrupted": 0,
    "unreadable": 0,
    "violations": [],
    "seconds": 0.42,
    "what": "every order",
    "passed": True,
}


def test_a_check_that_looked_up_every_write_reads_as_such():
    assert integrity_line(CHECKED) == (
        "integrity: 1,234 acknowledged, 1,234 present, 0 lost, 0 corrupted, "
        "0 invariant violation(s) (checked in 0.42 s)"
    )


def test_answers_that_did_not_say_what_they_wrote_are_counted_as_not_looked_up():
    # A service whose answers carry no ids (a stand-in server, an app that answers 204): its
    # writes are acknowledged but none can be found again, which must not read as "0 lost" alone.
    section = {**CHECKED, "acknowledged": 37, "present": 0, "unreadable": 37}
    assert integrity_line(section) == (
        "integrity: 37 acknowledged, 0 present, 0 lost, 37 not looked up (their answers did not "
        "say what was written), 0 corrupted, 0 invariant violation(s) (checked in 0.42 s)"
    )
