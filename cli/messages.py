"""What a command says on stderr besides its errors: tables, progress, the closing line; ``--quiet``.

The conventions every command follows:

- machine-readable output goes to stdout (``--json``, ``--csv``) or to a file
  (``-o``); everything for a person goes to stderr;
- a command that writes a file ends with one line saying what it wrote where,
  ``wrote refs.jsonl: 900 records`` (:func:`wrote`);
- ``-q/--quiet`` silences the tables, progress bars and that closing line;
  ``Warning:``, ``Error:`` and ``Interrupted:`` lines are still shown, and
  stdout is untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

F = TypeVar("F", bound=Callable[..., Any])

#: Where ``--quiet`` is kept: the context's meta, shared by the group and its command.
QUIET = "peakopt.quiet"


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[QUIET] = True


def quiet_option(func: F) -> F:
    """``-q/--quiet``: no tables, progress bars or closing line on stderr (errors and warnings stay)."""
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        is_eager=True,  # set before the other options' callbacks, which may already speak
        callback=_set_quiet,
        help="No tables, progress bars or closing line on stderr; warnings and errors are still shown.",
    )(func)


def quiet() -> bool:
    """Whether the running command was given ``--quiet`` (False outside a command)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(QUIET))


#: The width of the tables on a stderr that is not a terminal (a file, a pipe) when ``COLUMNS``
#: does not give one: wide enough that every table keeps its own width (a log file is read in an
#: editor, and searched, not folded), ``--wide``'s summary too.
PIPED_WIDTH = 300


def console() -> Console:
    """A rich console on stderr, silent under ``--quiet``; ``COLUMNS`` wide, or as wide as the terminal.

    The width is ``COLUMNS`` when it is set (a whole number), in a terminal or not; else the
    terminal's own, and :data:`PIPED_WIDTH` when stderr is a file or a pipe. The one console of
    every command, and it reads no markup, emoji codes or highlighting: every string it prints,
    a table's cells and titles included, is shown as it is. Tables hold names from users' files
    (a source ``[/bold]``, a machine ``m[red]x``), which markup would fail on or change; styles
    are given as ``style=`` arguments instead.
    """
    import os

    from rich.console import Console  # here: only the commands that draw tables load rich

    found = Console(stderr=True, quiet=quiet(), markup=False, emoji=False, highlight=False)
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        found.width = int(columns)
    elif not found.is_terminal:
        # rich would take the width of any terminal that stdin or stdout is: one documented width
        found.width = PIPED_WIDTH
    return found


def print_tables(*tables: Table) -> None:
    """Print tables on stderr, fitted to its width with nothing cut (nothing under ``--quiet``).

    See :func:`peakopt.cli.widths.fit`.
    """
    from peakopt.cli.widths import fit  # rich: only the commands that draw tables load it

    found = console()
    for table in tables:
        found.print(fit(table, found.width))


def note(text: str) -> None:
    """One line for a person on stderr (not under ``--quiet``)."""
    if not quiet():
        click.echo(text, err=True)


def wrote(where: object, what: str = "") -> None:
    """The closing line of a command that wrote a file: ``wrote WHERE: WHAT``."""
    note(f"wrote {where}: {what}" if what else f"wrote {where}")


def resume_hint(fresh: bool) -> str:
    """How to resume an interrupted ``solve`` or ``stress``: the same command, unless it had ``--fresh``."""
    return "run it again without --fresh to resume" if fresh else "run the same command again to resume"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 record``, ``2 records`` (``nouns`` for an irregular plural)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
