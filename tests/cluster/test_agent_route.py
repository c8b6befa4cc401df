"""The service's route made on the app agent (docs/cluster.md, "The app"): `--added-latency` starts
the latency relay on the app agent's machine beside the service, its round trips are measured
there, and a route that machine cannot make is refused in one line before anything is seeded.

Known answer (dbladder/transport/relay.py's rule): the relay holds every chunk `MS` each way, so a
`SELECT 1` round trip through it gains 2 x MS over the relay adding nothing, and a request's time
holding a connection (`in db`) gains 2 x MS for every round trip it makes. On loopback with real
processes: a scheduler, a load agent, an app agent and the shared PostgreSQL.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'dbladder[cluster]'")

from cli_support import dbladder, dbladder_here
from cluster_support import loopback_cluster

from dbladder.plans import Ladder
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

SMALL = {"products": 2000, "orders": 5000}
ADDED_MS = 5.0
# One level at a rate far below this machine's ceiling: no request waits for a connection, so a
# request's time in the database is its round trips and the server's own work.
ONE_LEVEL = Ladder(start=20, step=0, steps=1, hold=4.0, warmup=1.0)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler, a load agent and an app agent for the module's tests, none of which changes
    them (a cluster's start costs 15-20 s on a busy machine: three processes importing Dask)."""
    agents = {"load-1": {}, "app-1": {"role": "app"}}
    with loopback_cluster(tmp_path_factory.mktemp("cluster"), agents) as started:
        yield started


def _run(cluster_address: str, url: str, out, added_ms: float) -> dict:
    config = RunConfig(
        db_url=url,
        plan=ONE_LEVEL,
        sizes=SMALL,
        write_share=0.0,
        out_dir=out,
        cluster=cluster_address,
        added_latency_ms=added_ms,
        workers=1,
        pool_size=4,
    )
    return run_round(config).to_json()


def _in_db_ms(result: dict) -> float:
    (level,) = result["levels"]
    breakdown = level.get("service_breakdown") or level["machine"]
    return breakdown["database_mean_ms"]


@pytest.mark.slow
@pytest.mark.serial  # its round trips' figures: beside the parallel part's six workers one read too high
def test_the_relay_runs_on_the_app_agent_and_adds_its_latency_there(cluster, tmp_path, postgres_url):
    logged_before = len(cluster.agents["app-1"].text())
    # The relay adding nothing is what the relay adding 5 ms is compared against (its own cost).
    plain = _run(cluster.address, postgres_url, tmp_path / "plain", 0.0)
    slow = _run(cluster.address, postgres_url, tmp_path / "slow", ADDED_MS)
    agent_log = cluster.agents["app-1"].text()[logged_before:]  # what these two runs made it say
    for result in (plain, slow):
        assert result["status"] == "complete", result.get("flags")
        transport = result["transport"]
        assert transport["measured_on"] == "app-1"
        assert result["service"]["agent"] == "app-1"
        # The relay listened on the app machine's loopback, in front of the database's address.
        assert transport["relay"]["listen"].startswith("127.0.0.1:")
        assert transport["relay"]["stats"]["connections"] >= 1
        assert "through the latency relay" in result["engine"]["transport"]
    assert "Traceback" not in agent_log
    # Round trips measured on the app machine: through the relay adding 5 ms each way against the
    # relay adding nothing. Tolerance: from 2 x 5 ms (a held chunk never leaves before its due
    # time; 0.3 ms off for two medians of 100 round trips each) to 2 x 5 ms + 6 ms (the relay's
    # process and the client wake up late on a busy machine: 0.6-0.9 ms over in four runs at a
    # load of 4, 2.6 ms in one at a load of 7, and the relay's own tests saw a chunk 5 ms late).
    assert plain["transport"]["round_trip_us"]["direct"]["median"] > 0
    through = slow["transport"]["round_trip_us"]["through_relay"]["median"]
    base = plain["transport"]["round_trip_us"]["through_relay"]["median"]
    direct = slow["transport"]["round_trip_us"]["direct"]["median"]
    for added_us in (through - base, through - direct):  # against the relay adding nothing, and none
        assert 2 * ADDED_MS * 1000 - 300 <= added_us <= 2 * ADDED_MS * 1000 + 6000, (through, base, direct)
    # The service's time in the database per request grows by 2 x 5 ms for every round trip it
    # makes: the shop's product and page are one statement each, an order two (the order, then
    # its items), each one round trip on a prepared statement. Tolerance: 5 % under (the plain
    # run's own time in the database, a mean of 60 requests, varies by about a millisecond) to
    # 50 % over (held chunks leave a few hundred microseconds late, more on a busy machine, and a
    # connection opened in the window prepares its statements: one more round trip each).
    (level,) = slow["levels"]
    counts = {name: figures["requests"] for name, figures in level["operations"].items()}
    round_trips = (counts["product"] + counts["page"] + 2 * counts["order"]) / level["requests"]
    expected_ms = round_trips * 2 * ADDED_MS
    grown = _in_db_ms(slow) - _in_db_ms(plain)
    assert 0.95 * expected_ms <= grown <= 1.5 * expected_ms, (grown, expected_ms, counts)


@pytest.mark.slow
def test_a_unix_socket_to_a_database_on_another_machine_is_refused_in_one_line(cluster, tmp_path):
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the refusal comes before anything
    # connects to it, so nothing is ever sent there.
    run = dbladder(
        "run",
        "--cluster",
        cluster.address,
        "--db",
        "postgresql://postgres@192.0.2.1:5432/dbladder_refused",
        "--allow-remote-target",
        "--transport",
        "unix",
        "--out",
        str(tmp_path / "out"),
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("Error")]
    assert lines == [
        "Error: app agent app-1's machine, where the service runs, cannot make the route: "
        "--transport unix reaches a database only from its own machine, and 192.0.2.1 is not an "
        "address of this one: use --transport tcp, or run the app agent on the database's machine"
    ], run.stderr
    assert "preparing" not in run.stderr and "seed" not in run.stderr.lower()
    assert not (tmp_path / "out" / "result.json").exists()


def test_cluster_direct_mode_refuses_a_route_of_this_machine(tmp_path):
    run = dbladder_here(
        "run",
        "--cluster",
        "tcp://127.0.0.1:1",
        "--target",
        "direct",
        "--db",
        "postgresql://postgres@127.0.0.1:5432/dbladder_refused",
        "--added-latency",
        "5",
        "--out",
        str(tmp_path / "out"),
    )
    assert run.returncode == 2, run.stderr
    # The configuration's one problem, before anything connects (port 1 answers nothing).
    assert run.stderr.splitlines()[1:] == [
        "  - --added-latency and transport (--transport) go with the service's route, not with "
        "cluster direct mode (--cluster --target direct): the load agents connect to the database "
        "from their own machines, where this machine's relay or socket is not"
    ], run.stderr
