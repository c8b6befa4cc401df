"""Ctrl-C noted in a flag: a KeyboardInterrupt lost on the way still stops the run."""

from __future__ import annotations

import os
import signal

import pytest

from dbladder.cli.signals import sigterm_as_interrupt
from dbladder.run.interrupts import noting_interrupts


class SwallowsInItsFinaliser:
    """What Python does to an exception raised in __del__: prints it as ignored and goes on."""

    def __del__(self) -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.sigtimedwait([], 0)  # nothing to wait for: gives the handler its chance to run
        except KeyboardInterrupt:
            pass


def test_an_interrupt_swallowed_on_the_way_is_still_noted_and_raised_by_check():
    before = signal.getsignal(signal.SIGINT)
    with noting_interrupts() as interrupted:
        assert not interrupted
        interrupted.check()  # nothing yet: does not raise
        SwallowsInItsFinaliser()  # made and dropped: its __del__ runs here and eats the exception
        assert interrupted
        with pytest.raises(KeyboardInterrupt):
            interrupted.check()
    assert signal.getsignal(signal.SIGINT) is before


def test_sigterm_handled_as_ctrl_c_is_noted_too():
    # `dbladder run` maps SIGTERM to Ctrl-C; it goes through the SIGINT handler of the moment, so
    # the run's flag sees it as well.
    with noting_interrupts() as interrupted, sigterm_as_interrupt():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 0)
        assert interrupted
