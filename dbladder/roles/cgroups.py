"""Memory cgroups of dbladder's own: one per capped role, named for the run, removed after it.

    group = MemoryCgroup.create("database", 512 << 20)   # under the cgroup this process is in
    subprocess.Popen(command, preexec_fn=partial(confine, limits, group.procs))
    ...
    group.remove()                                        # once the role's processes have ended

The page cache of the files a role's processes read counts against its cgroup, so a database capped
at 512M caches no more of its data than on a 512 MB machine. cgroup v2 is used where the machine
mounts it with the memory controller, else v1's memory hierarchy (this project's machine has v1
only, with memory and cpuset). A group is made inside the one this process already belongs to, so
whatever limits the process lives under still hold for its roles.

A group's name carries the PID of the process that made it (`dbladder-<pid>-<role>-<token>`): a
run that was killed leaves its groups behind, and the next `create` finds those whose maker has
gone and removes them (a group still holding processes is left, and named in `leftovers`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from .errors import CgroupUnavailable

PREFIX = "dbladder-"
_NAME = re.compile(r"^dbladder-(\d+)-[a-z]+-[0-9a-f]+$")
# After its last process exits, the kernel may still hold a group busy for a moment.
REMOVE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Hierarchy:
    """Where this process's memory cgroup is, and how its files are named (v1 or v2)."""

    version: int
    parent: Path  # the cgroup this process is in; dbladder's groups go inside it


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, options) of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
                found.append((fields[1], fields[2], set(fields[3].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy, by controller ('' for v2's unified one)."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def memory_hierarchy() -> Hierarchy:
    """The memory hierarchy this process can make groups in; CgroupUnavailable with why not."""
    own = _own_paths()
    for mount, kind, _ in _mounts():
        if kind == "cgroup2" and "" in own:
            parent = Path(mount) / own[""].lstrip("/")
            controllers = (Path(mount) / "cgroup.controllers").read_text().split()
            if "memory" in controllers:
                return _usable(Hierarchy(2, parent))
    for mount, kind, options in _mounts():
        if kind == "cgroup" and "memory" in options and "memory" in own:
            return _usable(Hierarchy(1, Path(mount) / own["memory"].lstrip("/")))
    raise CgroupUnavailable(
        "--memory: this machine mounts no cgroup filesystem with the memory controller (see /proc/mounts)"
    )


def _usable(hierarchy: Hierarchy) -> Hierarchy:
    if not os.access(hierarchy.parent, os.W_OK):
        who = "root" if os.geteuid() == 0 else f"user {os.geteuid()}"
        raise CgroupUnavailable(
            f"--memory: {who} may not make cgroups in {hierarchy.parent} (run as root, or in a "
            f"delegated cgroup: systemd-run --user --scope -p Delegate=yes ...)"
        )
    if hierarchy.version == 2:
        subtree = hierarchy.parent / "cgroup.subtree_control"
        if "memory" not in subtree.read_text().split():
            try:
                subtree.write_text("+memory")
            except OSError as exc:
                raise CgroupUnavailable(
                    f"--memory: cannot enable the memory controller under {hierarchy.parent} "
                    f"({exc.strerror}); run in a cgroup of its own with it delegated"
                ) from None
    return hierarchy


def memory_problem() -> str | None:
    """Why `--memory` cannot be honoured here, on one line, or None when it can."""
    try:
        memory_hierarchy()
    except CgroupUnavailable as exc:
        return str(exc)
    return None


def _maker_gone(name: str) -> bool:
    match = _NAME.match(name)
    return match is not None and not psutil.pid_exists(int(match.group(1)))


def _members(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _rmdir(folder: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def leftovers(hierarchy: Hierarchy | None = None) -> list[Path]:
    """The groups of runs that have ended without removing them (their maker's PID is gone)."""
    hierarchy = hierarchy or memory_hierarchy()
    with contextlib.suppress(OSError):
        return sorted(p for p in hierarchy.parent.iterdir() if p.is_dir() and _maker_gone(p.name))
    return []


def remove_leftovers(hierarchy: Hierarchy | None = None) -> list[Path]:
    """Remove every leftover group that no process is in any more; the ones still in use."""
    in_use = []
    for folder in leftovers(hierarchy):
        if _members(folder) or not _rmdir(folder, timeout=0.5):
            in_use.append(folder)
    return in_use


@dataclass(frozen=True)
class MemoryCgroup:
    """One role's memory cgroup: its folder, its cap, and the file a process joins it by."""

    folder: Path
    limit: int
    version: int

    @property
    def procs(self) -> Path:
        """Writing a PID here moves that process into the group; its children are born inside."""
        return self.folder / "cgroup.procs"

    @classmethod
    def create(cls, role: str, limit: int) -> MemoryCgroup:
        """A new group for `role` capped at `limit` bytes (leftovers of killed runs removed first)."""
        hierarchy = memory_hierarchy()
        remove_leftovers(hierarchy)
        folder = hierarchy.parent / f"{PREFIX}{os.getpid()}-{role}-{secrets.token_hex(4)}"
        group = cls(folder, limit, hierarchy.version)
        group.ensure()
        return group

    def ensure(self) -> None:
        """Make the group with its cap if it is not there (a stopped server's group may have been
        removed as a leftover before the server is started again)."""
        if self.folder.is_dir():
            return
        try:
            self.folder.mkdir()
        except OSError as exc:
            raise CgroupUnavailable(
                f"--memory: cannot make the cgroup {self.folder} ({exc.strerror})"
            ) from None
        limit_file = "memory.max" if self.version == 2 else "memory.limit_in_bytes"
        try:
            (self.folder / limit_file).write_text(str(self.limit))
            if self.version == 2:
                # No swap to spill into: what does not fit is read again from disk, as on a small host.
                with contextlib.suppress(OSError):
                    (self.folder / "memory.swap.max").write_text("0")
        except OSError as exc:
            self.remove()
            raise CgroupUnavailable(
                f"--memory: cannot set the cap of {self.folder} ({exc.strerror})"
            ) from None

    def members(self) -> list[int]:
        """The PIDs in the group now."""
        return _members(self.folder)

    def peak(self) -> int | None:
        """The most memory the group has used, page cache included (bytes), where the kernel says."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.folder / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def oom_kills(self) -> int | None:
        """How many of the group's processes the kernel has killed for passing its cap (None where
        the kernel does not say: v1's memory.oom_control has it from Linux 4.13)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            for line in (self.folder / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            return None
        return None

    def leave(self) -> None:
        """Move this process back to the group it came from (the parent), so this one can go."""
        (self.folder.parent / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self, timeout: float = REMOVE_TIMEOUT) -> bool:
        """Remove the group once its processes have ended; False if some are still in it."""
        return _rmdir(self.folder, timeout)
