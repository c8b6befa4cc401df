"""TLS for a cluster (`--tls DIR`) and the addresses that may go without it.

Dask's own TLS (`distributed.security.Security`, tls:// addresses) with one dedicated certificate
authority for the cluster: DIR holds `ca.pem` (the authority), `cert.pem` (a certificate it
signed, for servers and clients alike) and `key.pem` (that certificate's key). Every machine of
the cluster gets a copy of DIR; each end checks that the other's certificate was signed by the
authority (both ways, as Dask sets it up: no host names are checked, the cluster's own authority
is the check). `dbladder scheduler --make-certs DIR` writes the three files; the authority's own
key is not kept, so nobody can sign a fourth one later. The same files by openssl are in
docs/cluster.md.

Without TLS a scheduler, an agent or a run's coordinator refuses an address that is neither
loopback nor private (one line, exit 2, before anything binds or connects): the control plane
carries pickled calls, which must not cross the open internet in clear.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from pathlib import Path
from typing import Any

from ..errors import UsageError

FILES = ("ca.pem", "cert.pem", "key.pem")
VALID_DAYS = 365
CA_KEY_USAGE = {
    "digital_signature": False,
    "content_commitment": False,
    "key_encipherment": False,
    "data_encipherment": False,
    "key_agreement": False,
    "key_cert_sign": True,  # the authority signs certificates, and nothing else
    "crl_sign": True,
    "encipher_only": False,
    "decipher_only": False,
}


class CleartextRefused(UsageError):
    """A public address for the cluster without --tls."""


class TlsFolderBad(UsageError):
    """--tls DIR without the files it must hold."""


def make_certs(folder: Path, days: int = VALID_DAYS) -> list[Path]:
    """Write ca.pem, cert.pem and key.pem into `folder` (made if missing; key.pem readable by its
    owner only); the paths written. UsageError if any of them is already there."""
    try:
        import cryptography  # noqa: F401  (a wheel, in the cluster extra)
    except ImportError:
        from . import INSTALL, ClusterExtraMissing

        raise ClusterExtraMissing(f"--make-certs needs the cryptography package: {INSTALL}") from None
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    paths = [folder / name for name in FILES]
    if taken := [str(path) for path in paths if path.exists()]:
        raise UsageError(f"--make-certs would overwrite {', '.join(taken)}: give an empty folder")
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dbladder cluster authority")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # a machine whose clock is a little behind
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(**CA_KEY_USAGE), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dbladder cluster member")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    ca_path, cert_path, key_path = paths
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return paths


def tls_files(folder: Path) -> tuple[Path, Path, Path]:
    """DIR's ca.pem, cert.pem, key.pem, or TlsFolderBad naming what is missing."""
    paths = tuple(folder / name for name in FILES)
    if missing := [path.name for path in paths if not path.is_file()]:
        raise TlsFolderBad(
            f"--tls {folder} has no {', '.join(missing)}: make the files with "
            f"`dbladder scheduler --make-certs {folder}` and copy the folder to every machine"
        )
    return paths  # type: ignore[return-value]


def security(folder: Path | None) -> Any:
    """Dask's Security for the files in `folder` (every role the same certificate), or None."""
    if folder is None:
        return None
    from distributed.security import Security

    ca, cert, key = (str(path) for path in tls_files(folder))
    return Security(
        tls_ca_file=ca,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        tls_client_cert=cert,
        tls_client_key=key,
        require_encryption=True,
    )


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise UsageError(f"cannot resolve the cluster host {host!r}: {exc}") from None
    return [ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found]


def in_the_open(host: str) -> str | None:
    """Why `host` is reachable from outside a private network ("every interface", "public"), or
    None for a loopback or private address (every address a name resolves to must be)."""
    for address in _addresses(host):
        if address.is_unspecified:
            return "every interface"
        if not (address.is_loopback or address.is_private):
            return "a public address" if str(address) == host.strip("[]") else f"a public address ({address})"
    return None


def check_cleartext(what: str, host: str, tls: Path | None) -> None:
    """Refuse `what` ("the scheduler would listen") on a host in the open without TLS."""
    if tls is not None:
        return
    where = in_the_open(host)
    if where is not None:
        raise CleartextRefused(
            f"{what} on {host}, {where}, without TLS: give --tls DIR (made by "
            "`dbladder scheduler --make-certs DIR`, docs/cluster.md), or a loopback or private address"
        )
