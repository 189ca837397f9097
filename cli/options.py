"""The numeric option types every command shares: finite numbers in a documented range.

click checks them while it parses the command line, so a bad value — ``nan``,
``inf``, ``1e300``, a seed CP-SAT cannot take — is a usage error (exit 2)
before any file is read or any work starts, never an error row per item.
``--help`` shows each option's range (click prints it next to the default).

The ranges, and why, are in :mod:`peakopt.campaign.ranges`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from peakopt.campaign.ranges import SECONDS, SEED

if TYPE_CHECKING:
    from peakopt.oracle.tables.rows import PlanRow, ScoreRow

F = TypeVar("F", bound=Callable[..., Any])


def seed_option(help_text: str, name: str = "--seed") -> Callable[[F], F]:
    """``--seed N`` (default 0) in :data:`SEED`'s range."""
    return click.option(name, type=SEED, default=0, show_default=True, help=help_text)


def seconds_option(name: str, default: float, help_text: str) -> Callable[[F], F]:
    """A time limit option in seconds, in :data:`SECONDS`'s range."""
    return click.option(name, type=SECONDS, default=default, show_default=True, help=help_text)


def grouped(name: str, kind: type[Any], *options: Callable[[Any], Any]) -> Callable[[F], F]:
    """Options that reach the command as one frozen dataclass ``kind``, its parameter ``name``.

    A command with many options takes a few groups instead of one parameter each (no function of
    the command line takes more than a dozen). ``options`` are click option decorators (or other
    groups: a group nests) listed as they would be stacked, so ``--help`` lists them in that
    order, at the place of the group: option names, defaults, help and checks are theirs,
    unchanged. The values whose names are ``kind``'s fields are taken out of the callback's
    keyword arguments and handed over as ``kind(**values)``.

    Examples
    --------
    ``@grouped("read", ReadOptions, input_options)`` gives the command ``read: ReadOptions``
    in place of ``fmt``, ``cpu`` and ``keep_dummies``.
    """
    names = [field.name for field in dataclasses.fields(kind)]

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def callback(*args: Any, **kwargs: Any) -> Any:
            kwargs[name] = kind(**{field: kwargs.pop(field) for field in names})
            return func(*args, **kwargs)

        # functools.wraps shares the options declared below the group: a list of the callback's own
        vars(callback)["__click_params__"] = list(getattr(func, "__click_params__", []))
        decorated: Callable[..., Any] = callback
        for option in reversed(options):  # as stacked: the last one listed is applied first
            decorated = option(decorated)
        return cast(F, decorated)

    return decorate


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
    from peakopt.oracle.tables.aggregate import check_group_keys  # NumPy: not for --help and validate

    try:
        check_group_keys(rows, by)
    except ValueError as exc:
        also = ", ".join(f"{alias} for {name}" for alias, name in BY_ALIASES.items())
        raise click.BadParameter(f"{exc} ({also})", param_hint="--by") from None


def split_option(needs: str) -> Callable[[F], F]:
    """``--split all|hard`` (:data:`peakopt.instances.names.SPLITS`); ``needs`` says what the split needs."""
    from peakopt.instances.names import SPLITS  # a plain constant: the floor itself loads the oracle

    return click.option(
        "--split",
        type=click.Choice(SPLITS),
        default="all",
        show_default=True,
        help="Only the pairs of this split: hard = those no trivial answer (every step at 0, one at "
        f"a time, ASAP) solves optimally; {needs}.",
    )
