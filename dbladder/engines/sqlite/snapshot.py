"""Snapshots of the SQLite engine: a sibling file, `<file>.dbladder_snapshot`, saved with SQLite's
backup API and put back by a file copy (docs/design.md, "Fresh data for every run")."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil

import apsw

from ...errors import MissingDatabase
from .connection import SQLiteCore

# A snapshot is a sibling file named after the database: `shop.db.dbladder_snapshot`.
SNAPSHOT_SUFFIX = ".dbladder_snapshot"
PARTIAL_SUFFIX = ".partial"  # a snapshot being written
RESTORING_SUFFIX = ".dbladder_restoring"  # a copy of the snapshot before it replaces the database
# Files SQLite keeps beside a database file; each belongs to that one file.
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")


class SQLiteSnapshots(SQLiteCore):
    """`save_snapshot`, `restore_snapshot` and `drop_snapshot`."""

    async def save_snapshot(self) -> str:
        """Copy the database to `<file>.dbladder_snapshot` with SQLite's online backup.

        The backup API copies every page inside one read transaction, WAL frames included, so the
        copy is consistent without a checkpoint first and whatever another process does. A file
        copy is right only after a checkpoint and while no writer exists, which this engine cannot
        see for other processes; it was faster (0.09-0.12 s against 0.23-0.39 s for the seeds'
        104 MB, docs/design.md), but a save happens once per round. The copy is written under a
        temporary name and renamed, so a snapshot file is never half written.
        """
        snapshot = self.path + SNAPSHOT_SUFFIX
        partial = snapshot + PARTIAL_SUFFIX
        connection = await self._pool.acquire()
        try:
            await asyncio.to_thread(_backup, connection.db, partial)
        except BaseException:
            _remove_with_side_files(partial)
            raise
        finally:
            await self._pool.release(connection)
        _remove_side_files(snapshot)
        os.replace(partial, snapshot)
        _sync_folder(snapshot)
        return snapshot

    async def restore_snapshot(self, token: str) -> None:
        """Close the pool, put a copy of the snapshot in place of the database file, reopen.

        A file copy (the kernel copies in place; 0.18-0.20 s for 104 MB, synced) rather than a
        backup into the open database: in WAL mode that writes every page to the WAL and a
        checkpoint writes it again (0.48-0.90 s). Nothing else has the file open (the caller's
        promise). The WAL, shared-memory and journal files left beside the old file belong to it:
        kept, SQLite would replay them into the new file, so they go before the copy takes its place.
        """
        snapshot = _checked_token(token)
        if not os.path.isfile(snapshot):
            raise MissingDatabase(f"no SQLite snapshot {snapshot}; save_snapshot() makes one")
        await self._pool.close()
        partial = self.path + RESTORING_SUFFIX
        try:
            await asyncio.to_thread(_copy_durably, snapshot, partial)
            _remove_side_files(self.path)
            os.replace(partial, self.path)
            _sync_folder(self.path)
        except BaseException:
            _remove_with_side_files(partial)
            raise
        finally:
            self._pool = self._new_pool()
        await self.open()

    async def drop_snapshot(self, token: str) -> None:
        snapshot = _checked_token(token)
        _remove_with_side_files(snapshot)
        _remove_with_side_files(snapshot + PARTIAL_SUFFIX)
        _remove_with_side_files(self.path + RESTORING_SUFFIX)


def _checked_token(token: str) -> str:
    """The snapshot path of a token; refuses anything else, so a mistake cannot remove a database."""
    if not token.endswith(SNAPSHOT_SUFFIX):
        raise ValueError(f"not a SQLite snapshot token: {token!r}")
    return token


def _backup(source: apsw.Connection, path: str) -> None:
    """Copy the whole of `source` into a new file at `path` (removed first if a failed try left it)."""
    _remove_with_side_files(path)
    target = apsw.Connection(path)
    try:
        # One step of every page: one read transaction on the source, so one consistent state.
        # The target commits with synchronous=FULL (SQLite's default), so the copy is on disk.
        with target.backup("main", source, "main") as backup:
            backup.step(-1)
    finally:
        target.close()


def _copy_durably(source: str, target: str) -> None:
    """Copy a file and force it to the disk: otherwise the kernel writes the copy back during the run."""
    shutil.copyfile(source, target)
    descriptor = os.open(target, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sync_folder(path: str) -> None:
    """Make a rename or removal in the folder of `path` durable."""
    descriptor = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _remove_side_files(path: str) -> None:
    for suffix in SIDE_FILE_SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def _remove_with_side_files(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    _remove_side_files(path)
