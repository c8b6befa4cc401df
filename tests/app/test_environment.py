"""The app's environment: DATABASE_URL as frameworks read it, the pieces apart, the password aside."""

from __future__ import annotations

from pathlib import Path

from dbladder.app.environment import app_environment, database_url_for_app, secrets
from dbladder.urls import parse_url, with_password


def test_sqlite_is_an_absolute_path_with_four_slashes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = parse_url("sqlite:///shop.db")
    assert database_url_for_app(url) == f"sqlite:///{tmp_path.resolve()}/shop.db"
    assert database_url_for_app(url).startswith("sqlite:////")
    environment = app_environment(url)
    assert environment["DBLADDER_DB_ENGINE"] == "sqlite"
    assert environment["DBLADDER_DB_PATH"] == str(Path(tmp_path.resolve(), "shop.db"))
    assert "DBLADDER_DB_HOST" not in environment


def test_postgresql_takes_the_postgres_scheme_and_its_default_port():
    url = parse_url("postgresql://bench@127.0.0.1/shop")
    assert database_url_for_app(url) == "postgres://bench@127.0.0.1:5432/shop"
    environment = app_environment(url, port=8123)
    assert environment["DBLADDER_DB_ENGINE"] == "postgresql"
    assert (environment["DBLADDER_DB_HOST"], environment["DBLADDER_DB_PORT"]) == ("127.0.0.1", "5432")
    assert (environment["DBLADDER_DB_NAME"], environment["DBLADDER_DB_USER"]) == ("shop", "bench")
    assert environment["PORT"] == "8123"


def test_mariadb_takes_the_mysql_scheme():
    url = parse_url("mariadb://root@127.0.0.1:3307/test")
    assert database_url_for_app(url) == "mysql://root@127.0.0.1:3307/test"


def test_a_unix_socket_folder_is_the_host_percent_encoded():
    url = parse_url("postgresql://postgres@/shop?host=/var/run/postgresql")
    assert database_url_for_app(url) == "postgres://postgres@%2Fvar%2Frun%2Fpostgresql:5432/shop"
    assert app_environment(url)["DBLADDER_DB_HOST"] == "/var/run/postgresql"


def test_a_password_goes_only_in_the_client_variables():
    url = with_password(parse_url("postgresql://bench@127.0.0.1:5432/shop"), {"PGPASSWORD": "s3cret!"})
    environment = app_environment(url)
    assert environment["PGPASSWORD"] == "s3cret!"
    assert "s3cret" not in environment["DATABASE_URL"]
    assert [name for name, value in environment.items() if "s3cret" in value] == [
        "PGPASSWORD",
        "DBLADDER_DB_PASSWORD",
    ]
    assert secrets(environment) == ("s3cret!",)
    mariadb = parse_url("mariadb://root:pw9@127.0.0.1:3306/test")
    assert app_environment(mariadb)["MYSQL_PWD"] == "pw9"
    assert "pw9" not in app_environment(mariadb)["DATABASE_URL"]
