"""Ctrl-C noted in a flag as well as raised, so a run cannot miss it.

Python raises KeyboardInterrupt wherever the main thread happens to be when SIGINT arrives; inside
a finaliser (`__del__`, a weakref callback) the exception is printed as "ignored" and lost, and a
run would climb its whole ladder after the user asked it to stop. The signal module's documentation
warns of this and advises a flag. The runner checks the flag between events as well, and it decides
the result's status, whatever happened to the exception.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class Interrupted:
    """Whether Ctrl-C came while the block ran; `check()` raises KeyboardInterrupt once it has."""

    def __init__(self) -> None:
        self._noted = threading.Event()

    def note(self) -> None:
        self._noted.set()

    def __bool__(self) -> bool:
        return self._noted.is_set()

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C came, even if the one raised by the signal was lost."""
        if self._noted.is_set():
            raise KeyboardInterrupt


@contextlib.contextmanager
def noting_interrupts() -> Iterator[Interrupted]:
    """SIGINT sets the flag, then raises KeyboardInterrupt as Python's own handler does, for the
    block; the previous handler is restored after it. Outside the main thread (where no handler
    can be set) the flag is never set and the caller relies on the exception alone."""
    interrupted = Interrupted()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return

    def interrupt(signum: int, frame: Any) -> None:
        interrupted.note()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)
