"""Checking what an unprivileged user meets, from a test that runs as root."""

from __future__ import annotations

import os
from collections.abc import Callable

from dbladder.errors import DbladderError

NOBODY = 65534


def as_nobody(check: Callable[[], object]) -> str:
    """What `check()` returns, or the message of the DbladderError it raises, in a fork that has
    given up root (the user may not be able to read this Python's files, so no new process)."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(NOBODY, NOBODY, NOBODY)
            os.write(writer, str(check()).encode())
        except DbladderError as exc:
            os.write(writer, str(exc).encode())
        except BaseException as exc:
            os.write(writer, f"{type(exc).__name__}: {exc}".encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    return said
