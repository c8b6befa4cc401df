"""What is checked when an agent or a run's coordinator reaches the scheduler
(dbladder.cluster.joining): the versions, refused at an agent's join by `dbladder scheduler`, and
a TLS mismatch in either direction, or certificates of another authority, said as such.

An agent "of another version" reports the versions of DBLADDER_TEST_AGENT_VERSIONS (read only by
an agent) instead of this installation's.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time

import pytest

pytest.importorskip("distributed", reason="needs the cluster extra: pip install 'dbladder[cluster]'")
pytest.importorskip("cryptography", reason="needs the cluster extra: pip install 'dbladder[cluster]'")

from cli_support import run_main
from cluster_support import DBLADDER, loopback_cluster

from dbladder.cluster.joining import TlsMismatch, check_tls, refused_versions, startup_information
from dbladder.cluster.security import make_certs
from dbladder.cluster.settings import DASK_SETTINGS, version_words, versions

ODD = {"dbladder": "0.0.1", "python": "3.9.0"}
ODD_ENV = {"DBLADDER_TEST_AGENT_VERSIONS": "dbladder=0.0.1,python=3.9.0"}
ANSWERED_WITHIN = 30.0
"""Seconds a refused agent or run may take to its one line, the interpreter's start and Dask's
import included (2-3 s on a quiet 2-core machine, up to 20 s with three others importing at once);
Dask's own connection would have waited out its connect timeout and then its death timeout."""


def _chain(exc: BaseException | None):
    while exc is not None:
        yield exc
        exc = exc.__cause__


def test_dbladders_scheduler_refuses_a_worker_of_other_versions_at_its_registration():
    # In this process: the scheduler and three workers on loopback. The worker of other versions
    # fails to start with the scheduler's versions in its failure and is never registered; one
    # of this installation's versions and a plain Dask worker (no versions reported) are let in.
    import dask
    from distributed import Worker

    from dbladder.cluster.scheduler import VersionCheckingScheduler

    mine = versions()
    odd = {**mine, **ODD}
    logged: list[str] = []

    async def scenario() -> tuple[BaseException | None, list[str]]:
        def worker(address: str, name: str, reported: dict[str, str] | None) -> Worker:
            return Worker(
                address,
                name=name,
                nthreads=1,
                host="127.0.0.1",
                dashboard=False,
                dashboard_address="127.0.0.1:0",
                memory_limit=0,
                death_timeout=5,
                startup_information=startup_information(reported) if reported else None,
            )

        async with VersionCheckingScheduler(
            announce=logged.append,
            host="127.0.0.1",
            port=0,
            dashboard=False,
            dashboard_address="127.0.0.1:0",
        ) as scheduler:
            failed: BaseException | None = None
            try:
                await worker(scheduler.address, "load-old", odd)
            except Exception as exc:
                failed = exc
            async with worker(scheduler.address, "load-1", mine), worker(scheduler.address, "plain", None):
                names = sorted(str(state.name) for state in scheduler.workers.values())
            return failed, names

    with dask.config.set(DASK_SETTINGS):
        failed, names = asyncio.run(asyncio.wait_for(scenario(), timeout=30))
    assert failed is not None
    assert refused_versions(_chain(failed)) == mine
    assert names == ["load-1", "plain"]
    assert len(logged) == 1
    assert logged[0].startswith("refused agent load-old (tcp://127.0.0.1:")
    assert logged[0].endswith(f"): it runs {version_words(odd)}, this scheduler {version_words(mine)}")


@pytest.fixture(scope="module")
def schedulers(tmp_path_factory):
    """A `dbladder scheduler` in clear and one over TLS, on loopback, no agents; the TLS files of
    the second, another authority's, and a folder with the first's authority but the other's
    certificate."""
    folder = tmp_path_factory.mktemp("joining")
    make_certs(folder / "tls")
    make_certs(folder / "other")
    mixed = folder / "mixed"
    mixed.mkdir()
    shutil.copy(folder / "tls" / "ca.pem", mixed)
    for name in ("cert.pem", "key.pem"):
        shutil.copy(folder / "other" / name, mixed)
    with (
        loopback_cluster(folder / "plain", {}) as plain,
        loopback_cluster(folder / "secured", {}, tls=folder / "tls") as secured,
    ):
        yield {"plain": plain, "tls": secured, "folder": folder}


def _agent(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    import os

    started = time.monotonic()
    done = subprocess.run(
        [*DBLADDER, "agent", "--role", "load", "--name", "load-x", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, **(env or {})},
    )
    return done, time.monotonic() - started


@pytest.mark.slow
def test_an_agent_of_another_version_is_refused_when_it_joins_in_one_line_naming_both(schedulers):
    cluster = schedulers["plain"]
    mine = versions()
    odd = {**mine, **ODD}
    done, took = _agent("--scheduler", cluster.address, env=ODD_ENV)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"Error: the scheduler at {cluster.address} refused this agent (load-x): it runs "
        f"{version_words(odd)}, the scheduler {version_words(mine)}: install the same versions on "
        "every machine"
    ]
    assert took < ANSWERED_WITHIN
    logged = [line for line in cluster.scheduler.text().splitlines() if line.startswith("refused")]
    assert len(logged) == 1 and logged[0].startswith("refused agent load-x (tcp://127.0.0.1:"), logged
    # It was never registered: an agent of this installation takes its name.
    agent = cluster.start_agent("load-x")
    cluster.wait_joined("load-x")
    agent.popen.terminate()
    agent.popen.wait(timeout=15)


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["clear-to-tls", "tls-to-clear"])
def test_an_agent_whose_tls_is_not_the_schedulers_says_so_in_one_line(schedulers, direction):
    folder = schedulers["folder"]
    if direction == "clear-to-tls":
        address = schedulers["tls"].address
        where = address.removeprefix("tls://")
        args = ["--scheduler", f"tcp://{where}"]
        line = (
            f"Error: the scheduler at tcp://{where} wants TLS: give --tls DIR (a copy of the "
            f"scheduler's folder: ca.pem, cert.pem, key.pem) and the address tls://{where}"
        )
    else:
        where = schedulers["plain"].address.removeprefix("tcp://")
        args = ["--scheduler", f"tls://{where}", "--tls", str(folder / "tls")]
        line = (
            f"Error: the scheduler at tls://{where} does not speak TLS: give tcp://{where} without "
            f"--tls, or start the scheduler with --tls {folder / 'tls'}"
        )
    done, took = _agent(*args)
    assert (done.returncode, done.stderr.splitlines()) == (1, [line])
    assert took < ANSWERED_WITHIN


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["clear-to-tls", "tls-to-clear"])
def test_a_run_whose_tls_is_not_the_schedulers_says_so_before_it_seeds(
    schedulers, direction, tmp_path, monkeypatch, capsys
):
    folder = schedulers["folder"]
    if direction == "clear-to-tls":
        where = schedulers["tls"].address.removeprefix("tls://")
        args = ["--cluster", f"tcp://{where}"]
        wanted = f"Error: the scheduler at tcp://{where} wants TLS: give --tls DIR"
    else:
        where = schedulers["plain"].address.removeprefix("tcp://")
        args = ["--cluster", f"tls://{where}", "--tls", str(folder / "tls")]
        wanted = f"Error: the scheduler at tls://{where} does not speak TLS: "
    database = tmp_path / "shop.db"
    started = time.monotonic()
    code, _, err = run_main(monkeypatch, capsys, "run", *args, "--db", f"sqlite:///{database}")
    took = time.monotonic() - started
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert code == 1 and len(errors) == 1 and errors[0].startswith(wanted), err
    assert "Traceback" not in err
    assert not database.exists()
    assert took < 10  # the probe's waits: 0.5 s, then at most 3 s for an answer


@pytest.mark.slow
def test_certificates_of_another_authority_are_said_to_be_refused(schedulers):
    folder = schedulers["folder"]
    address = schedulers["tls"].address
    other, mixed = folder / "other", folder / "mixed"
    done, took = _agent("--scheduler", address, "--tls", str(other))
    assert (done.returncode, done.stderr.splitlines()) == (
        1,
        [
            f"Error: the scheduler at {address} has a certificate not signed by {other / 'ca.pem'}: "
            f"copy the scheduler's --tls folder (ca.pem, cert.pem, key.pem) to this machine as {other}"
        ],
    )
    assert took < ANSWERED_WITHIN
    # This machine trusts the scheduler's authority, but its own certificate is another's.
    with pytest.raises(TlsMismatch) as refused:
        check_tls(address, mixed)
    assert str(refused.value).startswith(
        f"the scheduler at {address} refused this machine's certificate ({mixed / 'cert.pem'}): "
    )
    check_tls(address, folder / "tls")  # the scheduler's own files: nothing to say
    check_tls(schedulers["plain"].address, None)


def test_the_probe_says_nobody_answered_where_nobody_listens(tmp_path):
    # No mismatch is said where nobody listens: the agent or the run says "no scheduler answered".
    from cluster_support import free_port

    started = time.monotonic()
    assert check_tls(f"tcp://127.0.0.1:{free_port()}", None) is False
    assert check_tls(f"tls://127.0.0.1:{free_port()}", tmp_path) is False
    assert time.monotonic() - started < 1
    started = time.monotonic()
    assert check_tls(f"tcp://127.0.0.1:{free_port()}", None, wait=1.0) is False
    assert 0.8 <= time.monotonic() - started < 3  # tried again for its wait, then gave up


def test_a_tls_scheduler_still_starting_is_waited_for_and_its_mismatch_said(tmp_path):
    # A listener that speaks TLS (Python's own, with certificates of make_certs) opens its port
    # LATE seconds after the probe began: the probe keeps trying for its wait, then finds TLS
    # where this end speaks in clear. Without the retry it said nothing (nobody listened yet).
    import socket
    import ssl
    import threading

    from cluster_support import free_port

    late = 1.0
    make_certs(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    port = free_port()
    done = threading.Event()

    def listen_late() -> None:
        time.sleep(late)
        with socket.create_server(("127.0.0.1", port)) as server:
            server.settimeout(10)
            while not done.is_set():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    return
                with conn, contextlib.suppress(OSError):
                    conn.settimeout(5)
                    with context.wrap_socket(conn, server_side=True) as secured:
                        secured.recv(1)

    listener = threading.Thread(target=listen_late, daemon=True)
    listener.start()
    started = time.monotonic()
    try:
        with pytest.raises(TlsMismatch) as said:
            check_tls(f"tcp://127.0.0.1:{port}", None, wait=5.0)
    finally:
        done.set()
    took = time.monotonic() - started
    assert str(said.value).startswith(f"the scheduler at tcp://127.0.0.1:{port} wants TLS: give --tls DIR")
    assert late <= took < late + 5  # waited for the port, then the probe's 0.5 s in clear
    listener.join(timeout=15)
