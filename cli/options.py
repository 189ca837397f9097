"""The numeric option types every command shares: finite numbers in a documented range.

click checks them while it parses the command line, so a bad value — ``nan``,
``inf``, ``1e300``, a seed CP-SAT cannot take — is a usage error (exit 2)
before any file is read or any work starts, never an error row per item.
``--help`` shows each option's range (click prints it next to the default).

The ranges, and why:

- seeds: 0 … 2**31 − 1, CP-SAT's ``random_seed`` is a signed 32-bit integer
  (NumPy and Python's ``random`` accept every such seed);
- seconds (time limits): above 0, at most :data:`SECONDS_MAX` (about eleven
  days), so that every hard deadline built from them (twice the limit plus a
  minute, summed over a chunk) still fits a ``threading.Timer``, whose
  largest timeout is ``threading.TIMEOUT_MAX`` (about 292 years on Linux,
  and ``threading.Timer(1e300)`` overflows);
- processes and threads: 1 … :data:`PROCESSES_MAX`;
- counts of items: 1 … :data:`COUNT_MAX` (0 where nothing is a valid answer).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from peakopt.oracle.rows import PlanRow, ScoreRow

F = TypeVar("F", bound=Callable[..., Any])

#: The largest seed: CP-SAT's random_seed is an int32.
SEED_MAX = 2**31 - 1

#: The longest time limit in seconds (about 11.6 days).
SECONDS_MAX = 1e6

#: The most worker processes or solver threads one option may ask for.
PROCESSES_MAX = 1024

#: The most items (instances, workflows, evaluations, cases) one option may ask for.
COUNT_MAX = 10**6


class Finite(click.FloatRange):
    """A :class:`click.FloatRange` that also refuses ``nan`` and ``±inf``.

    A plain FloatRange lets ``nan`` through: every comparison with it is false.
    """

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, or a usage error naming the option when it is not finite or out of range."""
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


#: A seed of the solver, the methods and the generators.
SEED = click.IntRange(0, SEED_MAX)

#: A time limit in seconds.
SECONDS = Finite(0, SECONDS_MAX, min_open=True)

#: A number of worker processes or solver threads.
PROCESSES = click.IntRange(1, PROCESSES_MAX)

#: A number of items where at least one is needed.
COUNT = click.IntRange(1, COUNT_MAX)

#: A number of items where none is a valid answer.
COUNT_OR_NONE = click.IntRange(0, COUNT_MAX)

#: A probability or a share.
PROBABILITY = Finite(0, 1)


def seed_option(help_text: str, name: str = "--seed") -> Callable[[F], F]:
    """``--seed N`` (default 0) in :data:`SEED`'s range."""
    return click.option(name, type=SEED, default=0, show_default=True, help=help_text)


def seconds_option(name: str, default: float, help_text: str) -> Callable[[F], F]:
    """A time limit option in seconds, in :data:`SECONDS`'s range."""
    return click.option(name, type=SECONDS, default=default, show_default=True, help=help_text)


class Renamed(click.Option):
    """An option that still takes its old spellings for one release: hidden from ``--help``, warned.

    Parameters
    ----------
    old
        The old spellings (``--schedule``); each use prints one ``Warning:`` line naming the new one.
    """

    def __init__(self, *args: Any, old: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old = old

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        """Register the option, then its old spellings as one more parser option of the same value."""
        super().add_to_parser(parser, ctx)
        if not self.old:
            return
        shown = self.opts
        self.opts = list(self.old)  # click's own registration (its action, nargs, flag value), once more
        try:
            super().add_to_parser(parser, ctx)
        finally:
            self.opts = shown
        spelling = self.old[0]
        option = parser._long_opt.get(spelling) or parser._short_opt.get(spelling)
        process = option.process
        new = max(self.opts, key=len)

        def warned(value: Any, state: Any) -> None:
            old = " / ".join(self.old)
            click.echo(f"Warning: {old} is now {new}; the old spelling goes in the next release", err=True)
            process(value, state)

        option.process = warned


def split_names(values: Sequence[str]) -> tuple[str, ...]:
    """The names of a repeatable option whose values may be comma-separated (``-m a,b -m c``).

    Each name once, in the order first given; blanks dropped. Every list option
    (``--method``, ``--redo``, ``--by``) is read by this one function.
    """
    return tuple(dict.fromkeys(n.strip() for value in values for n in value.split(",") if n.strip()))


def method_list(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """Callback of a ``--method`` option: its names by :func:`split_names` (a usage error if only commas)."""
    names = split_names(value)
    if value and not names:
        raise click.BadParameter("name at least one method")
    return names


#: Other names of a ``--by`` field: ``stress`` and ``report`` called the rows' source their method.
BY_ALIASES = {"method": "source"}


def by_option(known: Sequence[str], help_text: str, *, first: str | None = None) -> Callable[[F], F]:
    """``--by``: comma-separated fields to group by (default ``source``; ``method`` means ``source``).

    Any field of the rows or of the input records may be named (``--by
    temperature`` groups by a record's own field); :func:`check_by` refuses a
    name no row has once the rows are read.

    Parameters
    ----------
    known
        The usual fields, for the help.
    help_text
        The option's help.
    first
        A field every grouping starts with (``report`` and ``stress`` always group by source).
    """

    def parse(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
        keys = [BY_ALIASES.get(k, k) for k in split_names([value])]
        return tuple(dict.fromkeys([*([first] if first else []), *keys]))

    return click.option(
        "--by",
        default="source",
        show_default=True,
        metavar="FIELD[,FIELD...]",
        callback=parse,
        help=help_text,
    )


def check_by(rows: Sequence[ScoreRow] | Sequence[PlanRow], by: Sequence[str]) -> None:
    """A usage error (before anything is written) when a ``--by`` field is on no row."""
    from peakopt.oracle.aggregate import check_group_keys  # NumPy: not for --help and validate

    try:
        check_group_keys(rows, by)
    except ValueError as exc:
        also = ", ".join(f"{alias} for {name}" for alias, name in BY_ALIASES.items())
        raise click.BadParameter(f"{exc} ({also})", param_hint="--by") from None
