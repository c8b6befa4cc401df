import pytest

from dbladder.errors import BadURL, UnknownEngine
from dbladder.urls import parse_url


def test_sqlite_relative_and_absolute_paths():
    assert parse_url("sqlite:///shop.db").path == "shop.db"
    assert parse_url("sqlite:///data/shop.db").path == "data/shop.db"
    assert parse_url("sqlite:////tmp/shop.db").path == "/tmp/shop.db"


def test_sqlite_settings_are_kept_as_params():
    url = parse_url("sqlite:///shop.db?journal_mode=DELETE&synchronous=NORMAL")
    assert url.engine == "sqlite"
    assert url.params == {"journal_mode": "DELETE", "synchronous": "NORMAL"}


def test_server_urls():
    url = parse_url("postgresql://bench:s3cret@127.0.0.1:5432/shop")
    assert (url.engine, url.user, url.password, url.host, url.port, url.database) == (
        "postgresql",
        "bench",
        "s3cret",
        "127.0.0.1",
        5432,
        "shop",
    )
    assert url.redacted == "postgresql://bench:***@127.0.0.1:5432/shop"
    socket = parse_url("postgresql:///shop?host=/var/run/postgresql")
    assert (
        socket.host is None and socket.database == "shop" and socket.params == {"host": "/var/run/postgresql"}
    )


@pytest.mark.parametrize("scheme", ["mariadb", "mysql"])
def test_mysql_scheme_is_mariadb(scheme):
    assert parse_url(f"{scheme}://root@127.0.0.1:3306/test").engine == "mariadb"


def test_with_database_replaces_only_the_name():
    url = parse_url("postgresql://postgres@127.0.0.1:5432/postgres?host=/tmp")
    assert url.with_database("other").raw == "postgresql://postgres@127.0.0.1:5432/other?host=/tmp"
    bare = parse_url("mariadb://root@127.0.0.1:3306")
    assert bare.with_database("x").database == "x"


@pytest.mark.parametrize(
    ("raw", "error", "fragment"),
    [
        ("", BadURL, "not a database URL"),
        ("shop.db", BadURL, "not a database URL"),
        ("oracle://x@y/z", UnknownEngine, "unknown database engine 'oracle'"),
        ("sqlite://host/shop.db", BadURL, "has no host"),
        ("sqlite:///", BadURL, "must name a file"),
        ("postgresql://u@127.0.0.1:99999/db", BadURL, "port"),
    ],
)
def test_bad_urls_say_what_is_wrong(raw, error, fragment):
    with pytest.raises(error, match=fragment):
        parse_url(raw)
