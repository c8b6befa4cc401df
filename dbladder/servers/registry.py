"""Where managed servers are recorded, so that another process can list, find and stop them.

The registry is one folder per user: `$DBLADDER_SERVERS_DIR`, else `<tmp>/dbladder-servers-<uid>`
(`/tmp/dbladder-servers-0` for root). Each entry is named after its server and is the server's own
folder (with `server.json` in it) or, for a server created under another base folder, a symbolic
link to that folder. Not $XDG_RUNTIME_DIR: it is usually a small tmpfs, where fsync costs nothing
(a benchmark there would flatter the durable engines), and root's is closed to the `postgres` and
`mysql` users that the servers run as.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import NotManaged, UnknownServer

ROOT_ENV = "DBLADDER_SERVERS_DIR"


def registry_root() -> Path:
    """The registry folder for this user (not created)."""
    configured = os.environ.get(ROOT_ENV)
    if configured:
        return Path(configured).absolute()
    return Path(tempfile.gettempdir()) / f"dbladder-servers-{os.getuid()}"


def ensure_root(root: Path) -> Path:
    """The registry folder, created if needed; NotManaged if it is not a folder of this user's
    (in a shared /tmp someone else could have put a link or a folder there first)."""
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o755, parents=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise NotManaged(f"{root} is not a folder owned by this user; remove it or set {ROOT_ENV}")
    # The servers run as other users (postgres, mysql) when dbladder runs as root: they must be
    # able to reach their folders inside.
    if info.st_mode & 0o755 != 0o755:
        root.chmod(0o755)
    return root


def register(root: Path, name: str, folder: Path) -> None:
    """Enter a server whose folder is outside the registry; FileExistsError if the name is taken."""
    if folder.parent != root:
        (root / name).symlink_to(folder, target_is_directory=True)


def unregister(root: Path, name: str) -> None:
    """Remove a server's link from the registry (its folder is removed by the caller)."""
    entry = root / name
    if entry.is_symlink():
        entry.unlink()


@dataclass(frozen=True)
class RegistryEntry:
    """One registry entry: its name, its folder, and why it cannot be read (None when it can)."""

    name: str
    folder: Path
    problem: str | None = None


def entries(root: Path | None = None) -> list[RegistryEntry]:
    """Every entry in the registry, sorted by name; unreadable ones carry their problem."""
    root = root or registry_root()
    if not root.is_dir():
        return []
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        folder = entry.resolve()
        problem = None
        if not folder.is_dir():
            problem = f"its folder {folder} is gone"
        elif not (folder / "server.json").is_file():
            problem = f"{folder} has no server.json"
        found.append(RegistryEntry(entry.name, folder, problem))
    return found


def entry(name: str, root: Path | None = None) -> RegistryEntry:
    """The registry entry of that name, or UnknownServer."""
    for candidate in entries(root):
        if candidate.name == name:
            return candidate
    known = ", ".join(e.name for e in entries(root)) or "none"
    raise UnknownServer(f"no managed server named {name!r} (registered: {known}; see dbladder db list)")
