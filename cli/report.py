"""``peakopt report``: per-method statistics of a stress store or a scores file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from rich.table import Table

from peakopt.cli.score import read_scores
from peakopt.cli.tables import show, to_csv, to_json
from peakopt.instances import InputError
from peakopt.oracle import ScoreRow, aggregate
from peakopt.oracle.aggregate import ScoreSummary
from peakopt.oracle.columns import summary_columns
from peakopt.solver.campaign import ERROR
from peakopt.solver.store import read_score_rows

#: --by fields: ``method`` is the rows' ``source``.
BY_FIELDS = {"method": "source", "tier": "tier", "machine": "machine", "workflow": "workflow"}


class MethodSummary(ScoreSummary):
    """:class:`~peakopt.oracle.aggregate.ScoreSummary` and the count of failed runs (reason ``error``)."""

    errors: int


def summaries(rows: Sequence[ScoreRow], by: Sequence[str] = ("method",)) -> list[MethodSummary]:
    """Aggregates per group (``by`` of :data:`BY_FIELDS`), by :func:`peakopt.oracle.aggregate`."""
    fields = [BY_FIELDS[key] for key in by]
    found = []
    for summary in aggregate(rows, fields):
        group = {name: summary.group[field] for name, field in zip(by, fields, strict=True)}
        data = summary.model_dump() | {"group": group}
        found.append(MethodSummary(**data, errors=summary.invalid_reasons.get(ERROR, 0)))
    return found


def report_table(found: Sequence[MethodSummary], title: str) -> Table:
    """Per group: failed runs, then the summary columns of :mod:`peakopt.oracle.columns`."""
    table = Table(title=title, title_justify="left")
    names = list(found[0].group) if found else ["method"]
    columns = summary_columns(gaps=True)
    for name in names:
        table.add_column(name)
    table.add_column("errors", justify="right")
    for header, _ in columns:
        table.add_column(header, justify="right")
    for s in found:
        groups = (str(v) if v is not None else "-" for v in s.group.values())
        table.add_row(*groups, str(s.errors), *(cell(s) for _, cell in columns))
    return table


def parse_by(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    """Comma-separated fields of :data:`BY_FIELDS`; ``method`` always comes first."""
    keys = [k.strip() for k in value.split(",") if k.strip()]
    wrong = [k for k in keys if k not in BY_FIELDS]
    if wrong:
        raise click.BadParameter(f"unknown field {', '.join(wrong)}; choose from {', '.join(BY_FIELDS)}")
    return tuple(dict.fromkeys(["method", *keys]))


def read_rows(path: str) -> list[ScoreRow]:
    """Score rows of a results store (SQLite) or of a scores file (``peakopt score -o``)."""
    source = Path(path)
    if not source.is_file():
        raise InputError(path, "", "does not exist")
    with source.open("rb") as handle:
        head = handle.read(16)
    return read_score_rows(source) if head == b"SQLite format 3\x00" else read_scores(path)


def emit(found: Sequence[MethodSummary], as_json: bool, as_csv: bool, title: str) -> None:
    """The table on stderr; the summaries as JSON or CSV on stdout when asked."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv are exclusive")
    if as_json:
        click.echo(to_json(found))
    elif as_csv:
        click.echo(to_csv(found), nl=False)
    show(report_table(found, title))


@click.command("report")
@click.argument("path", metavar="RESULTS.sqlite|SCORES.jsonl")
@click.option(
    "--by",
    default="method",
    show_default=True,
    callback=parse_by,
    help=f"Also group by these comma-separated fields ({','.join(BY_FIELDS)}).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summaries as one JSON list.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the summaries as CSV.")
def report(path: str, by: tuple[str, ...], as_json: bool, as_csv: bool) -> None:
    """Per-method statistics of a stress run (its SQLite store) or of scores (peakopt score -o).

    Per method (and per --by group): rows, failed runs, invalid schedules,
    safe rate, mean / median / p95 / max gap to the proven optimum (over safe
    rows), the largest gap to the lower bound, mean avoidable cva, mean
    strict and safe MRU.

    Example: peakopt report results.sqlite --by method,tier
    """
    rows = read_rows(path)
    emit(summaries(rows, by), as_json, as_csv, f"peakopt report: {len(rows)} rows from {path}")
