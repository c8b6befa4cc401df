"""Finding the local database servers' processes by what they serve."""

from __future__ import annotations

import subprocess
import sys

import psutil

from dbladder.engines.base import EngineInfo
from dbladder.observe import database_processes
from dbladder.observe.database import SQLITE_HOW, _server_root
from dbladder.urls import parse_url


def test_the_local_postgresql_is_found_by_its_port_with_its_backends(postgres_url):
    url = parse_url(postgres_url)
    found = database_processes(postgres_url)
    assert found.warning is None
    assert found.how == f"port {url.port or 5432}"
    pids = found()
    assert found.root_pid in pids
    names = {psutil.Process(pid).name() for pid in pids}
    assert names <= {"postgres", "postmaster"}
    # The postmaster's children (checkpointer, WAL writer, backends) belong to the server.
    assert len(pids) > 1
    # What `dbladder engines` describes works as well as the URL.
    info = EngineInfo("postgresql", postgres_url, "16", "asyncpg", "0", "tcp", "read committed", 1, "", True)
    assert database_processes(info.to_dict()).root_pid == found.root_pid


def test_postgresql_through_its_unix_socket(postgres_url):
    port = parse_url(postgres_url).port or 5432
    found = database_processes(f"postgresql:///postgres?host=/var/run/postgresql&port={port}")
    by_port = database_processes(postgres_url)
    if found.how.startswith("socket"):
        assert found.root_pid == by_port.root_pid
    else:  # the server keeps its socket elsewhere on this machine: then found by name, and said so
        assert found.warning


def test_the_local_mariadb_is_one_mariadbd_process(mariadb_url):
    found = database_processes(mariadb_url)
    assert found.warning is None and found.how.startswith("port")
    pids = found()
    assert pids == [found.root_pid]
    assert psutil.Process(pids[0]).name() in ("mariadbd", "mysqld")


def test_sqlite_has_no_processes_of_its_own(tmp_path):
    found = database_processes(f"sqlite:///{tmp_path}/shop.db")
    assert found() == [] and found.warning is None
    assert found.how == SQLITE_HOW


def test_a_remote_server_cannot_be_observed_and_says_so():
    found = database_processes("postgresql://user@192.0.2.10:5432/shop")  # TEST-NET: never local
    assert found() == []
    assert "not on this machine" in (found.warning or "")


def test_a_url_that_cannot_be_read_is_a_warning():
    found = database_processes("nonsense")
    assert found() == [] and "cannot tell the database" in (found.warning or "")


def test_a_backend_that_ended_since_the_sockets_were_listed_is_no_server():
    # A connection on PostgreSQL's socket may be a backend that ends before it is looked up (a
    # busy machine's other clients come and go): the search must go on to the next match, not
    # name the ended backend the server (a CI run read such a PID as the server's root).
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert _server_root(ended.pid) is None
    # A live one is read up to its topmost ancestor of the same program (here this python, or the
    # python that started this test worker).
    root = _server_root(psutil.Process().pid)
    assert root is not None and psutil.Process(root).name() == psutil.Process().name()
