"""Settings from dbladder.toml and DBLADDER_<OPTION>: each takes effect, the command line wins, the
environment wins over the file, result.json says where each came from, and a bad file is one line
naming the file, the line and the key, exit 2. Real runs against a server of known capacity; the
one-line errors in this process (cli_support.dbladder_here)."""

from __future__ import annotations

import json
import os

import pytest
from cli_support import dbladder, dbladder_here
from known_servers import known_server

# One level of a ladder at 100 req/s: the hold is what the settings change.
LADDER = ["--preset", "quick", "--steps", "1", "--start", "100", "--step", "0", "--warmup", "0"]
SMALL = ["--size", "products=2000", "--size", "orders=5000"]


def _run(tmp_path, *args, env=None, cwd=None):
    environment = {name: value for name, value in os.environ.items() if not name.startswith("DBLADDER_")}
    environment.update(env or {})
    with known_server("fifo", service_ms=1.0) as server:
        result = dbladder(
            "run", "--db", f"sqlite:///{tmp_path}/x.db", *SMALL, "--service", server.url, *LADDER,
            "--out", str(tmp_path / "out"), *args, env=environment, cwd=cwd or tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads((tmp_path / "out" / "result.json").read_text())


def _hold(document):
    return document["config"]["ladder"]["hold"]


@pytest.mark.slow
def test_the_environment_sets_an_option_and_the_result_says_so(tmp_path):
    document = _run(tmp_path, env={"DBLADDER_HOLD": "1.5"})
    assert _hold(document) == 1.5
    assert document["settings"]["hold"] == {"value": 1.5, "source": "environment", "from": "DBLADDER_HOLD"}
    assert document["settings"]["workers"]["source"] == "default"
    assert document["settings"]["steps"] == {"value": 1, "source": "command line"}


@pytest.mark.slow
def test_the_file_sets_an_option_the_environment_wins_over_it_and_the_command_line_over_both(tmp_path):
    (tmp_path / "dbladder.toml").write_text("[run]\nhold = 1.5\ntimeout = 4\n")
    document = _run(tmp_path)
    assert _hold(document) == 1.5
    assert document["settings"]["hold"] == {"value": 1.5, "source": "file", "from": "dbladder.toml"}
    assert document["config"]["timeout"] == 4

    document = _run(tmp_path, env={"DBLADDER_HOLD": "1.2"})
    assert _hold(document) == 1.2 and document["settings"]["hold"]["source"] == "environment"
    assert document["settings"]["timeout"]["source"] == "file"

    document = _run(tmp_path, "--hold", "1", env={"DBLADDER_HOLD": "1.2"})
    assert _hold(document) == 1 and document["settings"]["hold"] == {"value": 1.0, "source": "command line"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run]\nhold = 3\nhol = 3\n", "dbladder.toml:3: [run] hol: dbladder run has no such option"),
        ("[run]\n\nhold = 'long'\n", "dbladder.toml:3: [run] hold: 'long' is not a valid float."),
        ("[runs]\nhold = 3\n", "dbladder.toml:1: [runs] is not a command; tables: "),
        ("hold = 3\n", "dbladder.toml:1: hold: settings go in a table per command"),
        ("[run]\ntarget = 'ftp'\n", "dbladder.toml:2: [run] target: 'ftp' is not one of 'http', 'direct'."),
        ("[run]\nsize = 'orders=5'\n", "dbladder.toml:2: [run] size: takes a list, e.g. ['orders=5']"),
        ("[run\n", "dbladder.toml: not valid TOML: "),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_the_line_and_the_key_exit_2(tmp_path, text, message):
    (tmp_path / "dbladder.toml").write_text(text)
    result = dbladder_here("run", "--db", f"sqlite:///{tmp_path}/x.db", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"Error: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_config_names_the_file_and_a_missing_one_exits_2(tmp_path):
    (tmp_path / "other.toml").write_text("[engines]\npool = 'x'\n")
    result = dbladder_here("--config", str(tmp_path / "other.toml"), "engines", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"Error: {tmp_path / 'other.toml'}:2: [engines] pool: 'x' is not a valid integer."
    )
    result = dbladder_here("--config", str(tmp_path / "none.toml"), "engines", cwd=tmp_path)
    assert result.returncode == 2 and f"--config: no such file: {tmp_path / 'none.toml'}" in result.stderr


@pytest.mark.slow
def test_a_file_named_after_the_command_is_read_and_named_in_the_result(tmp_path):
    settings = tmp_path / "settings" / "mine.toml"
    settings.parent.mkdir()
    settings.write_text("[run]\nhold = 1.5\n")
    (tmp_path / "dbladder.toml").write_text("[run]\nhold = 2\ntimeout = 4\n")  # the file named wins
    document = _run(tmp_path, "--config", str(settings))
    assert _hold(document) == 1.5
    assert document["settings"]["hold"] == {"value": 1.5, "source": "file", "from": str(settings)}
    assert document["settings"]["timeout"]["source"] == "default"


@pytest.mark.parametrize("where", ["before", "after"])
def test_config_before_or_after_the_command_has_the_same_precedence(tmp_path, where):
    (tmp_path / "x.db").touch()
    (tmp_path / "other.toml").write_text("[engines]\npool = 7\n")
    given = ["--config", str(tmp_path / "other.toml")]

    def pool(*args, env=None):
        command = [*given, "engines"] if where == "before" else ["engines", *given]
        environment = {name: value for name, value in os.environ.items() if not name.startswith("DBLADDER_")}
        environment.update(env or {})
        result = dbladder_here(
            *command, "--db", f"sqlite:///{tmp_path}/x.db", "--json", *args, env=environment
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["pool_size"]

    assert pool() == 7
    assert pool(env={"DBLADDER_POOL": "9"}) == 9
    assert pool("--pool", "5", env={"DBLADDER_POOL": "9"}) == 5


def test_a_file_after_the_command_wins_over_one_before_it(tmp_path):
    (tmp_path / "x.db").touch()
    (tmp_path / "first.toml").write_text("[engines]\npool = 'x'\n")  # never read: the second wins
    (tmp_path / "second.toml").write_text("[engines]\npool = 6\n")
    result = dbladder_here(
        "--config", str(tmp_path / "first.toml"), "engines", "--config", str(tmp_path / "second.toml"),
        "--db", f"sqlite:///{tmp_path}/x.db", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["pool_size"] == 6


def test_a_bad_key_in_a_file_after_the_command_is_one_line_exit_2(tmp_path):
    (tmp_path / "other.toml").write_text("[engines]\n\npol = 3\n")
    result = dbladder("engines", "--config", str(tmp_path / "other.toml"), cwd=tmp_path)  # the entry point
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"Error: {tmp_path / 'other.toml'}:3: [engines] pol: dbladder engines has no such option "
        "(dbladder engines --help lists them)\n"
    )
    result = dbladder_here("run", "--config", str(tmp_path / "none.toml"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == f"Error: --config: no such file: {tmp_path / 'none.toml'}\n"


def test_an_environment_variable_of_a_bad_value_is_refused_naming_it(tmp_path):
    result = dbladder_here(
        "run", "--db", f"sqlite:///{tmp_path}/x.db", cwd=tmp_path, env={**os.environ, "DBLADDER_HOLD": "long"}
    )
    assert result.returncode == 2
    assert "'long' is not a valid float" in result.stderr
