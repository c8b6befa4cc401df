"""SIGTERM as Ctrl-C for a command's work."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C for the block: the run stops its load, keeps what it measured, and
    removes what it started (a managed server, the service) instead of dying without `finally`.

    It calls whatever handles SIGINT at that moment, so a run noting Ctrl-C in a flag
    (run/interrupts.py) notes SIGTERM too."""

    def interrupt(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
