"""The group every command runs under: peakopt's errors as one line, interrupts, ``--quiet``.

This module imports click and the standard library only: ``peakopt --help``
loads it and nothing of the commands.

Interrupts: :func:`install` (run by the console script, not on import) turns
the first SIGINT or SIGTERM into :class:`Interrupted` in the main thread, so
that the commands clean up as for Ctrl-C — workers stopped, finished records
kept, the output file left as it was — and end with one ``Interrupted`` line
and exit 128 + the signal's number, no traceback. A second signal during that
clean-up ends the process at once; its workers end with it (see
:mod:`peakopt.campaign.pools`).
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from collections.abc import Coroutine
from types import FrameType
from typing import Any, NoReturn, TypeVar

import click

T = TypeVar("T")


class Group(click.Group):
    """A click group that turns peakopt's errors into one ``Error:`` line (exit 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a :class:`PeakoptError` or a failed file operation becomes one ``Error:`` line.

        An interrupt (Ctrl-C, SIGTERM) the command does not handle itself is
        one ``Interrupted`` line, exit 130 (143 for SIGTERM).
        """
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            interrupted(exc)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own: a usage error, --help, an abort
        except Exception as exc:
            # imported only once something failed: a command's --help comes through here, and
            # must not load pydantic (peakopt.models) to print its options
            from peakopt.models import PeakoptError
            from peakopt.models.extras import MissingExtra, missing_extra

            if isinstance(exc, PeakoptError):
                raise click.ClickException(str(exc)) from None
            extra = missing_extra(exc) if isinstance(exc, ImportError) else None
            if extra is not None:
                # an optional library imported where no require() names what needs it: the command
                what = " ".join(filter(None, [ctx.command_path, ctx.invoked_subcommand]))
                raise click.ClickException(str(MissingExtra(what, extra))) from None
            if not isinstance(exc, OSError) or exc.errno == errno.EPIPE:
                raise  # EPIPE: stdout's reader went away, click ends quietly
            # a disk that fills up, a file that vanishes: still one line
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None


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


#: The resource tracker's warning about semaphores it cleans up after an :func:`os._exit`.
_TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"


def install() -> None:
    """Make SIGINT and SIGTERM raise :class:`Interrupted` in this (the command's) process."""
    for signum in SIGNALS:
        signal.signal(signum, _first)
    # A second Ctrl-C ends the process at once: multiprocessing's resource tracker (started
    # later, with this environment) then removes the semaphores left behind, as it should,
    # but would also print a warning about them on the user's terminal.
    given = os.environ.get("PYTHONWARNINGS")
    if _TRACKER_QUIET not in (given or ""):
        os.environ["PYTHONWARNINGS"] = f"{given},{_TRACKER_QUIET}" if given else _TRACKER_QUIET


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end; SIGINT or SIGTERM cancels it and then raises :class:`Interrupted`.

    A signal raised as an exception in the middle of a task's own code is re-raised by
    asyncio each time a task awaiting that one resumes, out of the event loop's clean-up
    too: tasks are left pending and print their tracebacks after the ``Interrupted`` line.
    Delivered through the loop instead, the signal cancels the main task, so every task
    cleans up as for any cancellation (a controller ends its steps' processes). A second
    signal during that clean-up ends the process at once, as for the other commands.
    Afterwards the handlers in place before are back.
    """
    import asyncio  # here: the group module stays light for --help

    received: list[int] = []

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # a coroutine run by asyncio.run is a task

        def stop(signum: int) -> None:
            if received:
                _again(signum, None)
            received.append(signum)
            task.cancel()

        for signum in SIGNALS:
            loop.add_signal_handler(signum, stop, signum)
        return await main

    saved = {signum: signal.getsignal(signum) for signum in SIGNALS}
    try:
        result = asyncio.run(guarded())
    except asyncio.CancelledError:
        if not received:
            raise
    finally:
        for signum, handler in saved.items():  # the loop's removal would leave the defaults
            signal.signal(signum, handler)
    if received:  # also when the signal came as the run ended: its output is not written
        raise Interrupted(received[0])
    return result


def _first(signum: int, frame: FrameType | None) -> None:
    for other in SIGNALS:
        signal.signal(other, _again)
    raise Interrupted(signum)


def _again(signum: int, frame: FrameType | None) -> None:
    # the user insists: skip the clean-up; what is written stays, the workers die with us
    sys.stderr.flush()
    os.write(sys.stderr.fileno(), b"Interrupted again: stopped at once\n")
    os._exit(128 + signum)
