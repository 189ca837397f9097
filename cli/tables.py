"""Formatting of score rows, aggregates and leaderboards: rich tables on stderr, CSV and JSON on stdout.

The one emitter of machine-readable rows (:func:`emit`, with its options
:func:`format_options`): ``--json`` prints a record stream (a row per record)
as JSON Lines and a summary (a row per group) as one JSON document, a list;
``--csv`` prints either as CSV with a header line.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.cli.messages import print_tables
from peakopt.cli.options import grouped, split_names
from peakopt.plots.columns import (
    DIFFERENCE_COLUMNS,
    HEADLINE,
    NAME_HEADERS,
    STANDING_COLUMNS,
    WITHOUT_OPTIMUM,
    Column,
    column_key,
    group_label,
    monte_carlo_columns,
    number,
    percent,
    reasons,
    shown_columns,
    summary_columns,
)

# rich, the rows' models and the writers are imported by the functions that use them, so that a
# command's --help (which declares these options) imports no pydantic
if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.table import Table

    from peakopt.oracle.tables.aggregate import Correlation, PlanSummary, ScoreSummary
    from peakopt.oracle.tables.leaderboard import Board

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

#: Summary columns of text, left-aligned (the others hold figures).
TEXT_HEADERS = ("invalid reasons",)


@dataclass(frozen=True)
class Shown:
    """Which columns a summary table shows (``--wide``, ``--columns``): the headline by default.

    See :data:`~peakopt.plots.columns.HEADLINE` and :func:`~peakopt.plots.columns.shown_columns`.
    """

    wide: bool = False
    columns: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.wide and self.columns is not None:
            raise click.UsageError("--wide and --columns are exclusive")

    def pick(self, columns: Sequence[Column]) -> list[Column]:
        """The columns shown, out of a table's ``columns``."""
        return shown_columns(columns, self.columns, wide=self.wide)


#: The headline columns (no option given).
HEADLINE_SHOWN = Shown()


def shown_group(valid: Callable[[], Sequence[str]]) -> Callable[[F], F]:
    """``--wide`` and ``--columns NAME,...``, reaching the command as ``shown``, one :class:`Shown`.

    ``valid`` gives the names ``--columns`` takes (a table's headers); another name is a usage
    error listing them.
    """

    def parse(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        names = split_names([value])
        headers = list(valid())
        known = {column_key(header) for header in headers}
        unknown = [name for name in names if column_key(name) not in known]
        if unknown or not names:
            what = f"unknown column {', '.join(map(repr, unknown))}" if unknown else "name a column"
            choices = ", ".join(headers)
            raise click.BadParameter(f"{what}; choose from: {choices} (a space may be written _ or -)")
        return names

    wide = click.option(
        "--wide",
        is_flag=True,
        help="Show every column of the summary and Monte Carlo tables, not only the headline ones.",
    )
    columns = click.option(
        "--columns",
        metavar="NAME[,NAME...]",
        callback=parse,
        help="Show these columns of the summary table, in this order, beside its group columns "
        f"(names as in --wide's headers, a space written _ or -; default: {', '.join(HEADLINE)}; "
        f"{WITHOUT_OPTIMUM} too without references).",
    )
    return grouped("shown", Shown, wide, columns)


def score_columns(gaps: bool) -> list[Column]:
    """The summary columns of ``peakopt score``'s table, the invalid answers' reasons last."""
    return [*summary_columns(gaps), ("invalid reasons", lambda s: reasons(s.invalid_reasons))]


def score_table(
    summaries: Sequence[ScoreSummary], gaps: bool, title: str = "peakopt score", shown: Shown = HEADLINE_SHOWN
) -> Table:
    """Per-group scheduling aggregates; gap columns when references were given."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    columns = shown.pick(score_columns(gaps))
    table.add_column("group")
    for header, _ in columns:
        table.add_column(header, justify="left" if header in TEXT_HEADERS else "right")
    for s in summaries:
        table.add_row(group_label(s.group), *(stacked(cell(s)) for _, cell in columns))
    return table


def monte_carlo_table(summaries: Sequence[ScoreSummary], title: str, shown: Shown = HEADLINE_SHOWN) -> Table:
    """Per-group Monte Carlo figures (``score --samples``); gap columns with the perfect-information bound.

    Its headline (:data:`~peakopt.plots.columns.MONTE_CARLO_HEADLINE`) unless ``shown`` is wide:
    ``--columns`` names the summary table's columns, not these.
    """
    from rich.table import Table

    bounded = any(s.monte_carlo is not None and s.monte_carlo.efficiency is not None for s in summaries)
    table = Table(title=title, title_justify="left")
    table.add_column("group")
    columns = monte_carlo_columns(bounded, wide=shown.wide)
    for header, _ in columns:
        table.add_column(header, justify="right")
    for s in summaries:
        table.add_row(group_label(s.group), *(stacked(cell(s)) for _, cell in columns))
    return table


def stacked(cell: str) -> str:
    """A terminal cell with its interval on a second line (``0.912`` over ``[0.880, 0.940]``).

    A mean and its interval side by side make every column twice as wide, and a
    terminal then wraps them at any space; stacked, each column stays as wide as
    an interval. Exports join the lines again (:mod:`peakopt.cli.exports`).
    """
    return cell.replace(" [", "\n[", 1)


def plan_table(summaries: Sequence[PlanSummary]) -> Table:
    """Per-group planning aggregates."""
    from rich.table import Table

    table = Table(title="peakopt plan-score", title_justify="left")
    columns = ["group", "records", "invalid", "edge F1", "closure F1", "reduction F1", "concurrency F1"]
    columns += ["GED/(|V|+|E|)", "exact", "cyclic", "hallucinating", "invalid reasons"]
    for column in columns:
        table.add_column(column, justify="left" if column in ("group", "invalid reasons") else "right")
    for s in summaries:
        table.add_row(
            group_label(s.group),
            str(s.records),
            str(s.invalid),
            number(s.edge_f1),
            number(s.closure_f1),
            number(s.reduction_f1),
            number(s.concurrency_f1),
            number(s.ged_normalised),
            percent(s.exact_match_rate),
            str(s.cyclic),
            str(s.hallucinating),
            reasons(s.invalid_reasons),
        )
    return table


def correlation_table(correlations: Sequence[Correlation]) -> Table:
    """Pearson and Spearman correlations per group."""
    from rich.table import Table

    first = correlations[0] if correlations else None
    title = f"{first.x} vs {first.y}" if first else "correlation"
    table = Table(title=title, title_justify="left")
    for column in ("group", "pairs", "Pearson", "Spearman"):
        table.add_column(column, justify="left" if column == "group" else "right")
    for c in correlations:
        table.add_row(group_label(c.group), str(c.pairs), number(c.pearson), number(c.spearman))
    return table


def _table(title: str, columns: Sequence[tuple[str, Callable[[T], str]]], items: Sequence[T]) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for header, _ in columns:
        table.add_column(header, justify="left" if header in NAME_HEADERS else "right")
    for item in items:
        table.add_row(*(stacked(cell(item)) for _, cell in columns))
    return table


def board_tables(board: Board) -> list[Table]:
    """The leaderboard and the paired differences (none with fewer than two sources)."""
    if len(board.standings) < 2:
        return []
    return [
        _table("leaderboard (mean efficiency, 95 % CI)", STANDING_COLUMNS, board.standings),
        _table("paired differences (common pairs, 95 % CI)", DIFFERENCE_COLUMNS, board.differences),
    ]


def board_json(board: Board) -> str:
    """The leaderboard as one JSON document (one line), '' with fewer than two sources."""
    if len(board.standings) < 2:
        return ""
    return json.dumps(board.model_dump(mode="json")) + "\n"


def show(*tables: Table) -> None:
    """Print tables on stderr, fitted to its width without cutting a cell (nothing under ``--quiet``)."""
    print_tables(*tables)


def flatten(row: BaseModel) -> dict[str, Any]:
    """One CSV row: maps become ``field.key`` columns, lists ``; ``-joined text, starts JSON.

    A map of maps (a summary's intervals) becomes ``field.key.inner`` columns.
    """
    flat: dict[str, Any] = {}
    for name, value in row.model_dump(mode="json").items():
        if isinstance(value, dict) and name in ("requested", "starts"):
            flat[name] = json.dumps(value, separators=(",", ":"))
        elif isinstance(value, dict):
            # one level deeper for a map of objects (a summary's intervals: intervals.efficiency.low)
            for key, v in value.items():
                if isinstance(v, dict):
                    flat.update({f"{name}.{key}.{inner}": x for inner, x in v.items()})
                else:
                    flat[f"{name}.{key}"] = v
        elif isinstance(value, list):
            flat[name] = "; ".join(item if isinstance(item, str) else json.dumps(item) for item in value)
        else:
            flat[name] = "" if value is None else value
    return flat


def to_csv(rows: Iterable[BaseModel]) -> str:
    """CSV text of rows, with the union of their columns in order of first appearance."""
    flat = [flatten(row) for row in rows]
    columns: dict[str, None] = {}
    for row in flat:
        columns.update(dict.fromkeys(row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return out.getvalue()


def to_json(rows: Iterable[BaseModel]) -> str:
    """One JSON list of rows."""
    return json.dumps(dump_rows(rows))


def dump_rows(rows: Iterable[BaseModel]) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts (for JSON Lines)."""
    return [row.model_dump(mode="json") for row in rows]


def format_options(what: str, stream: bool) -> Callable[[F], F]:
    """``--json`` and ``--csv``: print ``what`` on stdout (see :func:`emit` for the shapes).

    Parameters
    ----------
    what
        What is printed, for the help (``the per-record scores``).
    stream
        A record stream (JSON Lines) rather than a summary (one JSON document).
    """
    shape = "JSON Lines" if stream else "one JSON document, a list"

    def decorate(func: F) -> F:
        func = click.option("--csv", "as_csv", is_flag=True, help=f"Print {what} on stdout as CSV.")(func)
        return click.option("--json", "as_json", is_flag=True, help=f"Print {what} on stdout ({shape}).")(
            func
        )

    return decorate


def check_formats(as_json: bool, as_csv: bool) -> None:
    """A usage error for ``--json`` with ``--csv`` (checked before any work)."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv are exclusive")


def emit(rows: Sequence[BaseModel], as_json: bool, as_csv: bool, stream: bool) -> None:
    """Rows on stdout: JSON Lines (``stream``) or one JSON list with ``--json``, CSV with ``--csv``."""
    from peakopt.instances.native import to_jsonl

    check_formats(as_json, as_csv)
    if as_json:
        click.echo(to_jsonl(dump_rows(rows)) if stream else to_json(rows) + "\n", nl=False)
    elif as_csv:
        click.echo(to_csv(rows), nl=False)
