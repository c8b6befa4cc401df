"""TLS for a cluster and the addresses refused in clear (dbladder.cluster.security)."""

from __future__ import annotations

import socket
import ssl
import stat
import threading

import pytest
from cli_support import run_main

from dbladder.cluster.security import in_the_open, make_certs, tls_files
from dbladder.errors import InvalidConfig, UsageError
from dbladder.run.config import RunConfig

REFUSAL = (
    "without TLS: give --tls DIR (made by `dbladder scheduler --make-certs DIR`, docs/cluster.md), "
    "or a loopback or private address"
)


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (
            ["scheduler", "--host", "8.8.8.8"],
            "Error: the scheduler would listen on 8.8.8.8, a public address, ",
        ),
        (
            ["scheduler", "--host", "0.0.0.0"],
            "Error: the scheduler would listen on 0.0.0.0, every interface, ",
        ),
        (
            ["agent", "--scheduler", "tcp://8.8.8.8:8786", "--role", "load"],
            "Error: this agent would connect to the scheduler on 8.8.8.8, a public address, ",
        ),
    ],
    ids=["scheduler-public", "scheduler-every-interface", "agent-public"],
)
def test_a_public_address_without_tls_is_refused_in_one_line_before_anything_binds(
    args, start, monkeypatch, capsys
):
    # Refused before Dask is reached: a scheduler that tried to bind 8.8.8.8 would fail otherwise.
    code, out, err = run_main(monkeypatch, capsys, *args)
    assert code == 2
    assert out == ""
    assert err == start + REFUSAL + "\n"


def test_a_run_to_a_public_scheduler_without_tls_is_refused(tmp_path):
    # The round's own check (`run --cluster` reaches it after the extra's import, which is slow).
    config = RunConfig(db_url=f"sqlite:///{tmp_path}/x.db", cluster="tcp://1.1.1.1:8786")
    with pytest.raises(InvalidConfig) as refused:
        config.checked()
    assert refused.value.problems == [
        "the run's coordinator would connect to the scheduler on 1.1.1.1, a public address, " + REFUSAL
    ]
    with pytest.raises(InvalidConfig, match="goes with cluster"):
        RunConfig(db_url=f"sqlite:///{tmp_path}/x.db", cluster_tls=tmp_path).checked()


@pytest.mark.parametrize(
    ("host", "where"),
    [
        ("127.0.0.1", None),
        ("::1", None),
        ("10.0.0.3", None),
        ("192.168.1.20", None),
        ("localhost", None),
        ("8.8.8.8", "a public address"),
        ("2001:4860:4860::8888", "a public address"),
        ("0.0.0.0", "every interface"),
        ("::", "every interface"),
    ],
)
def test_which_addresses_are_in_the_open(host, where):
    assert in_the_open(host) == where


def test_the_scheme_must_match_tls(monkeypatch, capsys, tmp_path):
    code, _, err = run_main(
        monkeypatch, capsys, "agent", "--scheduler", "tls://127.0.0.1:8786", "--role", "db"
    )
    assert (code, err) == (
        2,
        "Error: a tls:// scheduler address needs --tls DIR (its ca.pem, cert.pem, key.pem): "
        "'tls://127.0.0.1:8786'\n",
    )
    code, _, err = run_main(
        monkeypatch,
        capsys,
        "agent",
        "--scheduler",
        "tcp://127.0.0.1:8786",
        "--role",
        "db",
        "--tls",
        str(tmp_path),
    )
    assert (code, err) == (
        2,
        "Error: with --tls the scheduler's address is tls://HOST:PORT, not 'tcp://127.0.0.1:8786'\n",
    )


def test_tls_without_its_files_says_how_to_make_them(tmp_path):
    with pytest.raises(UsageError) as missing:
        tls_files(tmp_path)  # what `security` reads first, before it imports Dask
    assert str(missing.value) == (
        f"--tls {tmp_path} has no ca.pem, cert.pem, key.pem: make the files with "
        f"`dbladder scheduler --make-certs {tmp_path}` and copy the folder to every machine"
    )


def test_make_certs_writes_files_that_complete_a_mutual_tls_handshake(tmp_path, monkeypatch, capsys):
    pytest.importorskip("cryptography", reason="needs the cluster extra: pip install 'dbladder[cluster]'")
    folder = tmp_path / "certs"
    code, out, _ = run_main(monkeypatch, capsys, "scheduler", "--make-certs", str(folder))
    assert code == 0
    assert out.splitlines()[:3] == [f"wrote {folder / name}" for name in ("ca.pem", "cert.pem", "key.pem")]
    assert stat.S_IMODE((folder / "key.pem").stat().st_mode) == 0o600
    ca, cert, key = (str(folder / name) for name in ("ca.pem", "cert.pem", "key.pem"))

    # Both ends as Dask sets them up: each proves itself with the certificate and checks the
    # other's against the authority; no host name is checked.
    def context(purpose: ssl.Purpose, side: int) -> ssl.SSLContext:
        made = ssl.SSLContext(side)
        made.load_cert_chain(cert, key)
        made.load_verify_locations(ca)
        made.verify_mode = ssl.CERT_REQUIRED
        made.check_hostname = False
        return made

    server = context(ssl.Purpose.CLIENT_AUTH, ssl.PROTOCOL_TLS_SERVER)
    client = context(ssl.Purpose.SERVER_AUTH, ssl.PROTOCOL_TLS_CLIENT)
    left, right = socket.socketpair()
    seen: dict[str, object] = {}

    def serve() -> None:
        with server.wrap_socket(left, server_side=True) as wrapped:
            seen["client"] = wrapped.getpeercert()
            wrapped.sendall(wrapped.recv(5)[::-1])

    thread = threading.Thread(target=serve)
    thread.start()
    with client.wrap_socket(right) as wrapped:
        wrapped.sendall(b"hello")
        assert wrapped.recv(5) == b"olleh"
        assert dict(pair[0] for pair in wrapped.getpeercert()["issuer"])["commonName"] == (
            "dbladder cluster authority"
        )
    thread.join(timeout=5)
    assert seen["client"]  # the server saw the client's certificate: both ends proved themselves

    # A second authority's certificate is not accepted by the first's.
    with pytest.raises(UsageError, match="would overwrite"):
        make_certs(folder)
    other = make_certs(tmp_path / "other")
    stranger = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    stranger.load_cert_chain(str(other[1]), str(other[2]))
    stranger.load_verify_locations(ca)
    stranger.check_hostname = False
    left, right = socket.socketpair()
    refused: list[BaseException] = []

    def serve_refusing() -> None:
        try:
            with server.wrap_socket(left, server_side=True):
                pass
        except (ssl.SSLError, OSError) as exc:
            refused.append(exc)

    thread = threading.Thread(target=serve_refusing)
    thread.start()
    with pytest.raises((ssl.SSLError, OSError)), stranger.wrap_socket(right) as wrapped:
        wrapped.sendall(b"x")
        wrapped.recv(1)
    thread.join(timeout=5)
    left.close()
    assert refused
