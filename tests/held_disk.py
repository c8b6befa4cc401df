"""A disk whose sync rate is held where a test sets it: a loop device under a blkio write cap.

    with held_sync_disk(tmp_path, write_iops=150) as folder:   # about 50 fdatasyncs a second
        ... files in `folder` ...

A file in the test's temporary folder becomes a loop device (`losetup`) with an ext4 file system
without a journal (`mkfs.ext4 -O ^has_journal`), mounted in that folder. This process joins a
cgroup v1 blkio group of its own whose `blkio.throttle.write_iops_device` caps the writes to that
device; the processes it starts inherit the group (a run's service and its SQLite writer). Version
1 throttles the writes a process submits itself, not the kernel's writeback of its page cache:
an fsync's writes are the process's own, and with no journal the file's size and its extents are
written by the caller too (ext4's journal is written by the jbd2 thread, which no group holds).
Measured with `observe.disk.fsync_rate` on this machine: an append and its fdatasync take three
writes, and the rate held at a third of the cap, 19.9 at 60, 49.7 at 150 and 99.5 at 300, each
twice, against 390 a second on the same device uncapped.

Everything made is undone on the way out, also when the block raises: every process in the group
(this one, and any child still alive) back to the group it came from, the group removed, the file
system unmounted, the loop device detached. One thing is out of the test's hands: a mount
namespace another process makes while the disk is mounted (other work on this machine does)
holds a copy of the mount, and the file system lives until that namespace goes. `losetup
--detach` then marks the device to be detached by the kernel as its last user lets go (autoclear),
which it did here, some seconds later. A missing tool, no root, no cgroup v1 blkio or no free
loop device skips the test with that reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

BLKIO = Path("/sys/fs/cgroup/blkio")
TOOLS = ("losetup", "mkfs.ext4", "mount", "umount")
IMAGE_BYTES = 64 * 1024 * 1024
WRITES_PER_SYNC = 3  # an append's data, its inode and its extent, measured as the module doc says


def held_disk_problem() -> str | None:
    """Why a held disk cannot be made here, or None."""
    if os.geteuid() != 0:
        return "a held disk needs root (losetup, mount and a blkio cgroup)"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"a held disk needs {', '.join(missing)}"
    if not (BLKIO / "blkio.throttle.write_iops_device").exists():
        return f"a held disk needs cgroup v1 blkio throttling ({BLKIO}/blkio.throttle.write_iops_device)"
    return None


def _run(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        raise OSError(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip()


def _own_blkio_group() -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "blkio" in controllers.split(","):
            return BLKIO / path.lstrip("/")
    return BLKIO


@contextlib.contextmanager
def held_sync_disk(tmp_path: Path, write_iops: int) -> Iterator[Path]:
    """A folder on a file system whose writes, from this process and its children, are capped at
    `write_iops` a second: about write_iops / WRITES_PER_SYNC fdatasyncs a second. Skips the test
    with the reason where it cannot be made (`held_disk_problem`)."""
    problem = held_disk_problem()
    if problem is not None:
        pytest.skip(problem)
    image = tmp_path / "held-disk.img"
    folder = tmp_path / "held-disk"
    folder.mkdir()
    with image.open("wb") as file:
        file.truncate(IMAGE_BYTES)
    with contextlib.ExitStack() as undo:
        try:
            device = _run("losetup", "--find", "--show", str(image))
        except OSError as exc:
            pytest.skip(f"no loop device for a held disk: {exc}")
        undo.callback(_detach, device)
        _run("mkfs.ext4", "-q", "-F", "-O", "^has_journal", device)
        _run("mount", device, str(folder))
        undo.callback(_run, "umount", str(folder))
        numbers = Path(f"/sys/block/{Path(device).name}/dev").read_text().strip()
        home = _own_blkio_group()
        group = BLKIO / f"dbladder-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        group.mkdir()
        undo.callback(group.rmdir)
        undo.callback(_leave, group, home)
        (group / "blkio.throttle.write_iops_device").write_text(f"{numbers} {write_iops}\n")
        (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
        yield folder


def _leave(group: Path, home: Path) -> None:
    """Every process of `group` back to `home`: this one, and children it started inside (a
    multiprocessing resource tracker lives as long as the session)."""
    for pid in (group / "cgroup.procs").read_text().split():
        with contextlib.suppress(ProcessLookupError, OSError):
            (home / "cgroup.procs").write_text(f"{pid}\n")


def _detach(device: str, wait: float = 2.0) -> None:
    """Detach the loop device, and wait a little for the kernel to let it go (see the module doc)."""
    _run("losetup", "--detach", device)
    attached = Path(f"/sys/block/{Path(device).name}/loop/backing_file")
    deadline = time.monotonic() + wait
    while attached.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
