"""What every command shares: the group, input options, error handling, interrupts.

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
from collections.abc import Callable, Iterable
from importlib.metadata import version
from types import FrameType
from typing import Any, NoReturn, TypeVar

import click

from peakopt.instances import FORMATS, expand, load
from peakopt.instances.native import merge_files
from peakopt.instances.peakbench import CPU_CHOICES
from peakopt.models import PeakoptError, Suite

F = TypeVar("F", bound=Callable[..., Any])


class Group(click.Group):
    """A click group that turns peakopt's errors into one ``Error:`` line (exit 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a :class:`PeakoptError` or a failed file operation becomes one ``Error:`` line.

        An interrupt (Ctrl-C, SIGTERM) the command does not handle itself is
        one ``Interrupted`` line, exit 130 (143 for SIGTERM).
        """
        try:
            return super().invoke(ctx)
        except PeakoptError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:  # a disk that fills up, a file that vanishes: still one line
            if exc.errno == errno.EPIPE:  # stdout's reader went away: click ends quietly
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None
        except KeyboardInterrupt as exc:
            interrupted(exc)


def input_options(func: F) -> F:
    """Options that say how to read input files."""
    func = click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        help="Input format; detected from the extension or content by default.",
    )(func)
    func = click.option(
        "--cpu",
        type=click.Choice(CPU_CHOICES),
        default="peak",
        show_default=True,
        help="PeakBench contexts: which CPU figure becomes the cpu demand.",
    )(func)
    func = click.option(
        "--keep-dummies",
        is_flag=True,
        help="PSPLIB/Patterson: keep the dummy source and sink as zero-duration tasks.",
    )(func)
    return func


def input_files(paths: Iterable[str]) -> list[str]:
    """The files to read: each directory replaced by its input files, in sorted order.

    Warns once about files of those directories left out (PSPLIB result tables).

    Raises
    ------
    InputError
        On a directory that cannot be listed or holds no input file.
    """
    expanded = expand(paths)
    if expanded.skipped:
        warn(f"skipped {', '.join(expanded.skipped)}: PSPLIB result tables (optima, bounds), not instances")
    return list(expanded.files)


def read_inputs(paths: Iterable[str], fmt: str | None, cpu: str, keep_dummies: bool) -> Suite:
    """Load every input (every input file of a directory) and merge them into one suite."""
    return merge_files(
        (path, load(path, format=fmt, cpu=cpu, keep_dummies=keep_dummies)) for path in input_files(paths)
    )


def package_version() -> str:
    """The version, from the installed package's metadata."""
    return version("peakopt")


def warn(message: str) -> None:
    """One ``Warning:`` line on stderr."""
    click.echo(f"Warning: {message}", err=True)


def unconstrained(suite: Suite) -> list[str]:
    """Warnings for resources that tasks use but a machine does not limit."""
    used = frozenset().union(*(w.resources for w in suite.workflows))
    return [
        f"machine {m.name!r} does not limit {', '.join(sorted(used - m.capacity.keys()))}; "
        "it is treated as unconstrained"
        for m in suite.machines
        if used - m.capacity.keys()
    ]


def warn_unconstrained(*suites: Suite) -> None:
    """One ``Warning:`` line naming every resource a machine leaves unconstrained, if any."""
    notes = list(dict.fromkeys(note for suite in suites for note in unconstrained(suite)))
    if notes:
        warn("; ".join(notes))


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


def _first(signum: int, frame: FrameType | None) -> None:
    for other in SIGNALS:
        signal.signal(other, _again)
    raise Interrupted(signum)


def _again(signum: int, frame: FrameType | None) -> None:
    # the user insists: skip the clean-up; what is written stays, the workers die with us
    sys.stderr.flush()
    os.write(sys.stderr.fileno(), b"Interrupted again: stopped at once\n")
    os._exit(128 + signum)
