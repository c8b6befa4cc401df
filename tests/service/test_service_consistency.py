"""The two-instance check ("Postgres vs SQLite under load", db-wars): separate SQLite files
disagree, one PostgreSQL agrees."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from service_support import seed

from dbladder.cli import cli
from dbladder.service.consistency import check_instances


@pytest.mark.slow
def test_two_instances_on_their_own_sqlite_files_disagree(tmp_path):
    first, second = f"sqlite:///{tmp_path}/a.db", f"sqlite:///{tmp_path}/b.db"
    seed(first)
    seed(second)
    check = check_instances([first, second])
    assert (check.status_first, check.status_second) == (200, 404)
    assert not check.consistent
    assert "do NOT share" in check.explain()


@pytest.mark.slow
def test_two_instances_on_one_postgresql_agree(postgres_url):
    seed(postgres_url)
    check = check_instances([postgres_url])
    assert (check.status_first, check.status_second) == (200, 200)
    assert check.consistent and check.same_order


@pytest.mark.slow
def test_the_command_exits_1_when_instances_disagree(tmp_path):
    first, second = f"sqlite:///{tmp_path}/a.db", f"sqlite:///{tmp_path}/b.db"
    seed(first)
    seed(second)
    result = CliRunner().invoke(cli, ["check-instances", "--db", first, "--db", second])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[1].endswith(": 200") and lines[2].endswith(": 404")
