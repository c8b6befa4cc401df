"""What is checked when an agent or a run's coordinator reaches the scheduler, before Dask's own
connection: that both ends speak TLS or neither (and accept each other's certificates), and, at an
agent's join, that its versions are the scheduler's.

TLS. Dask's connection to a scheduler that speaks the other protocol fails in ways that look like
nobody being there: a plain connection to a TLS listener is closed on its first bytes, and a TLS
one to a plain listener ends in an empty FatalCommClosedError. So `check_tls` opens a connection
of its own first and reads what the scheduler says: a Dask listener in clear writes its handshake
as soon as it accepts, while a TLS listener says nothing until it gets a ClientHello, and then
answers with a TLS record (0x16 or 0x15, then 0x03 and a minor version). With --tls on both ends it
then completes a handshake with this machine's files, which tells a scheduler certificate this
authority did not sign from a certificate of ours the scheduler refused. A scheduler still starting
(its port refuses connections) is asked again until the caller's wait is over, as Dask's own
connection would keep trying: an agent started beside its scheduler is told of a mismatch, not
left to Dask's silence. Nobody answering by then is said by the caller.

Versions. `dbladder agent` sends its versions in its registration (a Dask worker's startup
information); `dbladder scheduler` (scheduler.py) answers one whose versions differ from its own
with Dask's own refusal (the reply that refuses a taken name), carrying its versions, logs it, and
never registers it; `refused_versions` finds that answer in the agent's failure. A plain `dask
scheduler` ignores the startup information: the run's check of every agent (coordinator.py) is
the last guard either way.
"""

from __future__ import annotations

import ast
import contextlib
import socket
import ssl
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import DbladderError
from .security import security
from .settings import version_words

PROBE_TIMEOUT = 3.0
"""Seconds the probe waits for the scheduler's connection and for each answer."""
CLEAR_WAIT = 0.5
"""Seconds the probe waits for a listener in clear to speak first before it sends a ClientHello:
a plain Dask listener writes its handshake at once, and is then never sent TLS bytes."""
RETRY_AFTER = 0.2
"""Seconds between tries of a port that refused the probe's connection."""
TLS_RECORDS = (0x15, 0x16)  # an alert, a handshake
STARTUP_KEY = "dbladder-versions"
"""The key of an agent's versions in its registration's startup information."""
REFUSED = "dbladder versions differ"
"""The scheduler's refusal's message: the reply also carries the scheduler's versions."""
REGISTER_REPLY = "Unexpected response from register: "
"""How Dask's worker words the scheduler's refusal it failed on (the reply's repr follows)."""


class TlsMismatch(DbladderError):
    """The scheduler speaks TLS and this end does not, the reverse, or their certificates differ."""


class VersionsDiffer(DbladderError):
    """The scheduler refused this agent: its dbladder, Dask or Python versions are not the scheduler's."""


def check_tls(address: str, tls: Path | None, wait: float = 0.0) -> bool:
    """TlsMismatch, in one line, if the scheduler at `address` wants TLS and `tls` is None, speaks
    in clear and `tls` is given, or refuses (or is refused by) the files in `tls`. A port that
    refuses connections is tried again for up to `wait` seconds. False if nobody answered there
    (the caller says so), True if all is well."""
    parts = urlsplit(address)
    host, port = parts.hostname, parts.port
    if host is None or port is None:
        return True  # not an address the probe can read: Dask's connection judges it
    if not _listening(host, port, wait):
        return False
    speaks_tls = _speaks_tls(host, port)
    if speaks_tls is None:
        return False
    where = address.split("://", 1)[-1]
    if speaks_tls and tls is None:
        raise TlsMismatch(
            f"the scheduler at {address} wants TLS: give --tls DIR (a copy of the scheduler's folder: "
            f"ca.pem, cert.pem, key.pem) and the address tls://{where}"
        )
    if not speaks_tls and tls is not None:
        raise TlsMismatch(
            f"the scheduler at {address} does not speak TLS: give tcp://{where} without --tls, or "
            f"start the scheduler with --tls {tls}"
        )
    if tls is not None:
        _check_certificates(host, port, address, tls)
    return True


def _listening(host: str, port: int, wait: float) -> bool:
    """Whether something accepts connections at host:port within `wait` seconds (one try if 0)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            socket.create_connection((host, port), timeout=PROBE_TIMEOUT).close()
            return True
        except ConnectionRefusedError:  # nothing listens yet: a scheduler may be starting
            if time.monotonic() + RETRY_AFTER > deadline:
                return False
            time.sleep(RETRY_AFTER)
        except OSError:  # silent or unreachable: waiting longer would not tell more
            return False


def _speaks_tls(host: str, port: int) -> bool | None:
    """Whether the listener at host:port answers a ClientHello with TLS (None: no answer)."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT) as sock:
            sock.settimeout(CLEAR_WAIT)
            with contextlib.suppress(TimeoutError):
                if first := _receive(sock, 3):
                    return _is_tls_record(first)
            sock.settimeout(PROBE_TIMEOUT)
            sock.sendall(_client_hello())
            first = _receive(sock, 3)
    except OSError:  # refused, reset or silent: Dask's own connection says what it finds
        return None
    return _is_tls_record(first) if len(first) == 3 else None


def _is_tls_record(first: bytes) -> bool:
    # A plain Dask listener's first 8 bytes are its frames' length, little-endian: under 64 KiB
    # its third byte is 0, never a TLS minor version.
    return first[0] in TLS_RECORDS and first[1] == 3 and 1 <= first[2] <= 4


def _receive(sock: socket.socket, count: int) -> bytes:
    """Up to `count` bytes: fewer only if the peer closed."""
    got = b""
    while len(got) < count:
        more = sock.recv(count - len(got))
        if not more:
            break
        got += more
    return got


def _client_hello() -> bytes:
    """The first flight of a TLS client, for any server (no certificate is checked: it is not sent on)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    outgoing = ssl.MemoryBIO()
    client = context.wrap_bio(ssl.MemoryBIO(), outgoing)
    with contextlib.suppress(ssl.SSLWantReadError):
        client.do_handshake()
    return outgoing.read()


def _check_certificates(host: str, port: int, address: str, tls: Path) -> None:
    """A TLS handshake with the files in `tls`, as Dask's connection makes it; then one byte of
    the scheduler's Dask handshake, which a scheduler that refused our certificate never sends
    (under TLS 1.3 its refusal comes after the client's side of the handshake is done)."""
    context = security(tls).get_connection_args("client")["ssl_context"]
    copy = f"copy the scheduler's --tls folder (ca.pem, cert.pem, key.pem) to this machine as {tls}"
    try:
        with (
            socket.create_connection((host, port), timeout=PROBE_TIMEOUT) as sock,
            context.wrap_socket(sock) as secured,
        ):
            secured.recv(1)
    except ssl.SSLCertVerificationError:
        raise TlsMismatch(
            f"the scheduler at {address} has a certificate not signed by {tls / 'ca.pem'}: {copy}"
        ) from None
    except ssl.SSLError:
        raise TlsMismatch(
            f"the scheduler at {address} refused this machine's certificate ({tls / 'cert.pem'}): {copy}"
        ) from None
    except OSError:
        return


def startup_information(versions: dict[str, str]) -> dict[str, Any]:
    """What an agent adds to its registration (Worker's startup_information)."""
    return {STARTUP_KEY: lambda worker: versions}


def reported_versions(extra: dict[str, Any] | None) -> dict[str, str] | None:
    """The versions a worker's registration carries (its `extra`); None for a plain Dask worker."""
    theirs = (extra or {}).get(STARTUP_KEY)
    return dict(theirs) if isinstance(theirs, dict) else None


def refusal(mine: dict[str, str]) -> dict[str, Any]:
    """The scheduler's reply refusing a worker of other versions than `mine`, as Dask's scheduler
    refuses a taken name (the worker reads its "time" before its status)."""
    return {"status": "error", "message": REFUSED, "versions": mine, "time": time.time()}


def refusal_line(name: str, address: str, theirs: dict[str, str], mine: dict[str, str]) -> str:
    """What the scheduler logs when it refuses an agent."""
    return (
        f"refused agent {name} ({address}): it runs {version_words(theirs)}, this scheduler "
        f"{version_words(mine)}"
    )


def refused_versions(failures: Iterable[BaseException]) -> dict[str, str] | None:
    """The scheduler's versions, if one of `failures` (a worker's failure to start, and its causes)
    is dbladder's scheduler refusing this agent for its versions."""
    for failure in failures:
        text = str(failure)
        if not (isinstance(failure, ValueError) and text.startswith(REGISTER_REPLY)):
            continue
        with contextlib.suppress(ValueError, SyntaxError):
            reply = ast.literal_eval(text[len(REGISTER_REPLY) :])  # a msgpack reply: plain literals
            if isinstance(reply, dict) and reply.get("message") == REFUSED:
                return dict(reply["versions"])
    return None
