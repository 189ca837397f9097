"""Ctrl-C and SIGTERM: one ``Interrupted`` line and exit 128 + the signal's number, no traceback.

:func:`install` (run by the console script, not on import) turns the first
SIGINT or SIGTERM into :class:`Interrupted` in the main thread, so that the
commands clean up as for Ctrl-C: workers stopped, finished records kept, the
output file left as it was. A second signal during that clean-up ends the
process at once; its workers end with it (see :mod:`peakopt.solver.backends`).
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import NoReturn

import click

#: The signals that stop a run.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal (a :class:`KeyboardInterrupt`, so Ctrl-C paths handle it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(exc: BaseException) -> int:
    """128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + (exc.signum if isinstance(exc, Interrupted) else signal.SIGINT)


def interrupted(exc: BaseException, message: str = "") -> NoReturn:
    """Say what the interrupted run kept, on one line, and exit with :func:`exit_code`."""
    click.echo(f"Interrupted: {message}" if message else "Interrupted", err=True)
    raise SystemExit(exit_code(exc)) from None


def install() -> None:
    """Make SIGINT and SIGTERM raise :class:`Interrupted` in this (the command's) process."""
    for signum in SIGNALS:
        signal.signal(signum, _first)


def _first(signum: int, frame: FrameType | None) -> None:
    for other in SIGNALS:
        signal.signal(other, _again)
    raise Interrupted(signum)


def _again(signum: int, frame: FrameType | None) -> None:
    # the user insists: skip the clean-up; what is written stays, the workers die with us
    sys.stderr.flush()
    os.write(sys.stderr.fileno(), b"Interrupted again: stopped at once\n")
    os._exit(128 + signum)
