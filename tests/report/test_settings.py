"""Each engine's settings as its configuration file (`dbladder.report.settings`)."""

from __future__ import annotations

from report_support import ENGINES

from dbladder.report.settings import settings_file


def test_settings_are_written_as_each_engines_config_file():
    caption, text = settings_file(ENGINES["mariadb"])
    assert caption.startswith("99-bench.cnf")
    assert text.splitlines() == [
        "[mariadbd]",
        "innodb_flush_log_at_trx_commit = 1",
        "skip-log-bin",
        "innodb_buffer_pool_size = 128M",
        "innodb_log_file_size = 96M",
        "transaction-isolation = READ-COMMITTED",
    ]
    caption, text = settings_file(ENGINES["postgresql"])
    assert caption.startswith("bench.conf")
    assert "shared_buffers = 128MB" in text and "default_transaction_isolation = 'read committed'" in text
    _, text = settings_file(ENGINES["sqlite"])
    assert "PRAGMA synchronous = FULL;" in text
