import pickle

import pytest

from dbladder.engine_registry import engine_kind, known_kinds, runs_in_process
from dbladder.engines.mariadb.credentials import read_option_file
from dbladder.errors import BadURL, UnknownEngine
from dbladder.urls import parse_url, resolve_url, url_text


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


# ---------------------------------------------------------------------------------------------
# Passwords: from the environment or a file, never shown.

SECRET = "s3cr#t/p@ss"  # characters that must be percent-encoded in a URL


def test_a_password_is_never_in_redacted_or_repr():
    url = parse_url("postgresql://bench:s3cr%23t%2Fp%40ss@127.0.0.1:5432/shop")
    assert url.password == SECRET and url.password_source == "the URL"
    assert url.redacted == "postgresql://bench:***@127.0.0.1:5432/shop"
    for text in (url.redacted, repr(url), str(url)):
        assert "s3cr" not in text, text
    assert "bench" in repr(url) and "127.0.0.1" in repr(url), "user and host may show"


@pytest.mark.parametrize(
    "raw",
    [
        "postgresql://u:s3cret@127.0.0.1:99999/db",
        "postgresql://u:s3cret@127.0.0.1/a/b",
        "oracle://u:s3cret@host/db",
        "postgresql://u:s3cret@127.0.0.1/db?password=s3cret",
        "mariadb://u:s3cret@127.0.0.1/db?x",
    ],
)
def test_error_messages_never_show_the_password(raw):
    with pytest.raises((BadURL, UnknownEngine)) as caught:
        parse_url(raw)
    assert "s3cret" not in str(caught.value)
    assert "u:***@" in str(caught.value)


def test_a_password_in_the_query_string_is_refused_with_where_to_put_it():
    with pytest.raises(BadURL, match="PGPASSWORD"):
        parse_url("postgresql://u@127.0.0.1/db?password=x")


def test_postgres_password_from_pgpassword_unless_the_url_has_one():
    env = {"PGPASSWORD": SECRET, "MYSQL_PWD": "other"}
    url = resolve_url("postgresql://bench@127.0.0.1/shop", env)
    assert (url.password, url.password_source) == (SECRET, "PGPASSWORD")
    assert SECRET not in url.redacted and SECRET not in repr(url)
    assert resolve_url("postgresql://bench:given@127.0.0.1/shop", env).password == "given"
    # No PGPASSWORD: left to asyncpg, which reads ~/.pgpass itself.
    assert resolve_url("postgresql://bench@127.0.0.1/shop", {"HOME": "/nonexistent"}).password is None
    # with_database (the tests' fixtures use it) keeps a password that is not in the URL's text.
    assert url.with_database("other").password == SECRET


def test_sqlite_has_no_password_to_find():
    url = resolve_url("sqlite:///shop.db", {"PGPASSWORD": "x", "MYSQL_PWD": "y"})
    assert url.password is None and url.path == "shop.db"


def test_the_url_comes_from_the_option_then_dbladder_db_url_then_the_default():
    env = {"DBLADDER_DB_URL": "postgresql://env@127.0.0.1/shop"}
    assert resolve_url("sqlite:///given.db", env).path == "given.db"
    assert resolve_url(None, env).user == "env"
    assert resolve_url(None, {}, default="sqlite:///shop.db").path == "shop.db"
    with pytest.raises(BadURL, match="DBLADDER_DB_URL"):
        resolve_url(None, {})


def test_at_path_reads_the_url_from_a_file(tmp_path):
    secret_file = tmp_path / "db-url"
    secret_file.write_text("# the bench database\n\n  postgresql://bench:s3cret@127.0.0.1/shop  \nignored\n")
    url = resolve_url(f"@{secret_file}", {})
    assert (url.user, url.password, url.database) == ("bench", "s3cret", "shop")
    assert resolve_url(None, {"DBLADDER_DB_URL": f"@{secret_file}"}).password == "s3cret"
    assert url_text(f"@{secret_file}", {}) == "postgresql://bench:s3cret@127.0.0.1/shop"


def test_at_path_errors_name_the_file_and_never_its_content(tmp_path):
    with pytest.raises(BadURL, match=r"no file .*missing"):
        resolve_url(f"@{tmp_path / 'missing'}", {})
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n\n")
    with pytest.raises(BadURL, match="holds no database URL"):
        resolve_url(f"@{empty}", {})
    bad = tmp_path / "bad"
    bad.write_text("postgresql://u:s3cret@127.0.0.1:99999/db\n")
    with pytest.raises(BadURL) as caught:
        resolve_url(f"@{bad}", {})
    assert "s3cret" not in str(caught.value)


def my_cnf(home, text: str, mode: int = 0o600):
    path = home / ".my.cnf"
    path.write_text(text)
    path.chmod(mode)
    return {"HOME": str(home)}


def test_mariadb_password_and_user_from_the_option_file(tmp_path):
    env = my_cnf(tmp_path, "[client]\nuser = bench\npassword = 'from file'\n[mariadb]\npassword = server's\n")
    url = resolve_url("mariadb://127.0.0.1/shop", env)
    assert (url.user, url.password, url.password_source) == ("bench", "from file", "~/.my.cnf")
    # The URL's user and password win over the file's.
    assert resolve_url("mariadb://root@127.0.0.1/shop", env).user == "root"
    assert resolve_url("mariadb://root:given@127.0.0.1/shop", env).password == "given"


def test_mariadb_option_file_comes_before_mysql_pwd_as_in_the_mariadb_client(tmp_path):
    env = {**my_cnf(tmp_path, "[client]\npassword=file\n"), "MYSQL_PWD": "env"}
    assert resolve_url("mariadb://u@127.0.0.1/shop", env).password == "file"
    no_file = {"HOME": str(tmp_path / "elsewhere"), "MYSQL_PWD": "env"}
    url = resolve_url("mariadb://u@127.0.0.1/shop", no_file)
    assert (url.password, url.password_source) == ("env", "MYSQL_PWD")
    assert resolve_url("mariadb://u@127.0.0.1/shop", {"HOME": str(tmp_path / "elsewhere")}).password is None


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("[client]\npassword=a\n[mysql]\npassword=b\n", "b"),  # the last one given wins
        ("[mysql]\npassword=b\n[client]\npassword=a\n", "a"),
        ("[client]\npassword=a\n[mysql]\npassword=b\n[client]\npassword=c\n", "c"),
        ("[client]\npassword=a\n  password = b\n", "b"),  # an indented line is an option too
        ("; comment\n[Client]\nuser=u\npassword = a = b\n", "a = b"),
        ("!includedir /etc/mysql/conf.d/\n[client]\n  password = x#comment\n", "x"),
        ('[client]\npassword="x#y" # comment\n', "x#y"),
        ("[client]\npassword=a\\sb\\\\c\n", "a b\\c"),
        ("[client-mariadb]\npassword=c\n", "c"),
        ("[mariadb]\npassword=server\n[mysqld]\npassword=server\n", None),  # server groups
        ("[client]\npassword\n", None),  # no value: the client would ask for one
    ],
)
def test_mariadb_option_file_is_read_as_the_mariadb_client_reads_it(tmp_path, text, password):
    my_cnf(tmp_path, text)
    options = read_option_file(tmp_path / ".my.cnf")
    assert options.get("password") == password


def test_a_world_writable_option_file_is_ignored_as_mariadb_ignores_it(tmp_path):
    env = my_cnf(tmp_path, "[client]\npassword=x\n", mode=0o666)
    assert resolve_url("mariadb://u@127.0.0.1/shop", env).password is None


def test_a_broken_option_file_is_named_and_not_quoted(tmp_path):
    env = my_cnf(tmp_path, "[client\npassword=s3cret\n")
    with pytest.raises(BadURL, match=r"\.my\.cnf: line 1 is not a \[group\]") as caught:
        resolve_url("mariadb://u@127.0.0.1/shop", env)
    assert "s3cret" not in str(caught.value)


def test_the_kind_of_engine_a_url_names():
    sqlite = parse_url("sqlite:///shop.db").kind
    assert (sqlite.name, sqlite.label, sqlite.in_process, sqlite.has_server) == (
        "sqlite",
        "SQLite",
        True,
        False,
    )
    for raw, label in (("postgres://u@h/db", "PostgreSQL"), ("mysql://root@h/test", "MariaDB")):
        kind = parse_url(raw).kind
        assert (kind.label, kind.in_process, kind.has_server) == (label, False, True)
    assert engine_kind("mariadb") is parse_url("mariadb://root@h/test").kind
    with pytest.raises(UnknownEngine, match="'oracle'"):
        engine_kind("oracle")


def test_a_parsed_url_crosses_into_a_process_whole_and_keeps_its_password_out_of_repr():
    url = parse_url("postgresql://bench:s3cret@127.0.0.1:5432/shop?sslmode=disable")
    copy = pickle.loads(pickle.dumps(url))
    assert copy == url and copy.password == "s3cret" and copy.kind is url.kind
    assert "s3cret" not in repr(copy) and "s3cret" not in repr(copy.kind)


def test_a_result_s_engine_name_says_whether_it_ran_in_process():
    assert runs_in_process("sqlite") and not runs_in_process("postgresql")
    assert not runs_in_process("mariadb") and not runs_in_process("?") and not runs_in_process(None)
    formats = {kind.name: kind.settings_format for kind in known_kinds()}
    assert formats == {"sqlite": "pragmas", "postgresql": "postgresql.conf", "mariadb": "option file"}
