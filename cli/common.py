"""What every command shares: the group, input options, error handling."""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from importlib.metadata import version
from typing import Any, TypeVar

import click

from peakopt.cli.interrupts import interrupted
from peakopt.instances import FORMATS, load, merge
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


def read_inputs(paths: Iterable[str], fmt: str | None, cpu: str, keep_dummies: bool) -> Suite:
    """Load and merge every input into one suite."""
    return merge(load(p, format=fmt, cpu=cpu, keep_dummies=keep_dummies) for p in paths)


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


def warn_unconstrained(suite: Suite) -> None:
    """One ``Warning:`` line naming every resource a machine leaves unconstrained, if any."""
    notes = unconstrained(suite)
    if notes:
        warn("; ".join(notes))
