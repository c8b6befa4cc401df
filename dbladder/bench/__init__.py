"""Raw rounds and the journal-mode test of "SQLite handled 315 million daily requests on a laptop".

    rounds      point reads, single-row write transactions, batched inserts, through the engines,
                each beside a bare reference measured in the same run (references.py)
    journal     readers on timelines and one writer: WAL against DELETE on SQLite, and the same
                shape on PostgreSQL and MariaDB
    native      the shop's read mix run by the database's own client flat out (`dbladder bench --native`),
                the reference a direct-mode result carries as a ratio
    render      the results as text tables

Library functions return plain dicts; `dbladder bench` prints them or writes them as JSON.
"""

from __future__ import annotations

from .config import BenchConfig, JournalConfig
from .journal import JournalTestFailed, run_journal_test
from .render import render_journal, render_rounds
from .rounds import run_rounds

__all__ = [
    "BenchConfig",
    "JournalConfig",
    "JournalTestFailed",
    "render_journal",
    "render_rounds",
    "run_journal_test",
    "run_rounds",
]
