"""What a user writes (engine names, settings, `managed:` URLs) and what is missing, without servers."""

from __future__ import annotations

import pytest

from dbladder.errors import UsageError
from dbladder.servers import (
    BadServerSpec,
    ServerBinariesMissing,
    is_managed_spec,
    kind_for,
    parse_managed_spec,
)
from dbladder.servers import mariadb as mariadb_kind
from dbladder.servers import postgres as postgres_kind


@pytest.mark.parametrize(
    ("name", "engine"), [("postgres", "postgresql"), ("MySQL", "mariadb"), ("mariadb", "mariadb")]
)
def test_engine_names_follow_the_url_schemes(name, engine):
    assert kind_for(name).engine == engine


@pytest.mark.parametrize(
    ("name", "message"), [("sqlite", "SQLite has no server"), ("oracle", "choose mariadb or postgresql")]
)
def test_engines_without_a_managed_server_are_a_usage_error(name, message):
    with pytest.raises(BadServerSpec, match=message) as caught:
        kind_for(name)
    assert isinstance(caught.value, UsageError)


def test_settings_override_the_defaults_and_every_problem_is_named_at_once():
    mariadb = kind_for("mariadb")
    settings = mariadb.settings_with({"Innodb-Flush-Log-At-Trx-Commit": "2", "innodb_log_file_size": "48M"})
    assert settings["innodb_flush_log_at_trx_commit"] == "2" and settings["innodb_log_file_size"] == "48M"
    assert settings["max_connections"] == "200"  # untouched defaults stay
    with pytest.raises(BadServerSpec) as caught:
        kind_for("postgresql").settings_with(
            {"port": "1", "data_directory": "/", "a b": "1", "work_mem": "1\n2"}
        )
    message = str(caught.value)
    for problem in (
        "port is set by dbladder",
        "data_directory is set by dbladder",
        "'a b' is not a setting",
        "one line",
    ):
        assert problem in message


def test_managed_specs():
    assert is_managed_spec("managed:postgresql") and not is_managed_spec("postgresql://x@127.0.0.1/db")
    assert parse_managed_spec("managed:postgres") == ("postgresql", {})
    assert parse_managed_spec("managed:mariadb?innodb_flush_log_at_trx_commit=0&max_connections=300") == (
        "mariadb",
        {"innodb_flush_log_at_trx_commit": "0", "max_connections": "300"},
    )
    with pytest.raises(BadServerSpec, match="cannot read the settings"):
        parse_managed_spec("managed:mariadb?skip_log_bin")
    with pytest.raises(BadServerSpec, match="choose mariadb or postgresql"):
        parse_managed_spec("managed:")


def test_missing_programs_name_the_debian_package(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(postgres_kind, "DEBIAN_BIN_ROOT", tmp_path)
    monkeypatch.setattr(mariadb_kind, "SEARCH_FOLDERS", (str(tmp_path),))
    with pytest.raises(ServerBinariesMissing, match=r"install the Debian package postgresql$"):
        kind_for("postgresql").find_binaries()
    with pytest.raises(ServerBinariesMissing, match=r"\(mariadbd and mariadb-install-db\).*mariadb-server$"):
        kind_for("mariadb").find_binaries()


def test_only_postgresql_listens_on_another_address_and_mariadb_refuses_before_creating_anything(tmp_path):
    from dbladder.servers import start_managed

    with pytest.raises(
        UsageError, match=r"a managed MariaDB server listens on 127\.0\.0\.1 only, not 10\.1\.2\.3"
    ):
        start_managed("mariadb", base_dir=tmp_path, host="10.1.2.3")
    assert list(tmp_path.iterdir()) == []
    assert (
        postgres_kind.PostgresServer().url(5433, "10.1.2.3") == "postgresql://postgres@10.1.2.3:5433/dbladder"
    )
