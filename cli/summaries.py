"""The per-method summary of ``peakopt report`` and ``peakopt stress``: its options, tables and gate.

Both commands print the same summary (:func:`peakopt.campaign.summaries.summaries`) the same
way and fail on the same ``--fail-on`` thresholds: one home for both, so that neither command
imports the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.cli.exports import show_tables
from peakopt.cli.messages import note
from peakopt.cli.options import by_option, grouped
from peakopt.cli.tables import (
    HEADLINE_SHOWN,
    Shown,
    board_json,
    board_tables,
    emit,
    format_options,
    monte_carlo_table,
    shown_group,
    stacked,
)
from peakopt.models import PeakoptError
from peakopt.plots.columns import Column, summary_columns, unranked_note

# rich, the campaign's gates and summaries and the rows' models are imported by the functions that
# use them, so that the --help of report and stress (which declares these options) imports no pydantic
if TYPE_CHECKING:
    from rich.table import Table

    from peakopt.campaign.gates import Threshold
    from peakopt.campaign.summaries import MethodSummary
    from peakopt.oracle import ScoreRow
    from peakopt.oracle.tables.leaderboard import Board

F = TypeVar("F", bound=Callable[..., Any])

#: Error reasons listed under the summary; the store's ``error`` column has them all.
REASONS_SHOWN = 10

#: --by fields (``method`` is accepted for ``source``, the method that made a row).
BY_FIELDS = ("source", "setting", "tier", "machine", "workflow")


def report_table(found: Sequence[MethodSummary], title: str, shown: Shown = HEADLINE_SHOWN) -> Table:
    """Per group: the group's fields, then the ``shown`` summary columns of :mod:`peakopt.plots.columns`."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    names = list(found[0].group) if found else ["source"]
    columns = report_columns(shown)
    for name in names:
        table.add_column(name)
    for header, _ in columns:
        table.add_column(header, justify="right")
    for s in found:
        groups = (str(v) if v is not None else "-" for v in s.group.values())
        table.add_row(*groups, *(stacked(cell(s)) for _, cell in columns))
    return table


def report_columns(shown: Shown = HEADLINE_SHOWN) -> list[Column]:
    """The summary columns of the report's terminal table and of its HTML page: one list for both."""
    from peakopt.campaign.stress import ERROR

    return shown.pick(summary_columns(gaps=True, failed=ERROR))


def column_names() -> list[str]:
    """The names ``--columns`` takes on ``report`` and ``stress``: every summary column's header."""
    return [header for header, _ in report_columns(Shown(wide=True))]


def by_sources(help_text: str) -> Callable[[F], F]:
    """``--by``: the summary per source (the method), and also per these fields of :data:`BY_FIELDS`."""
    return by_option(BY_FIELDS, help_text, first="source")


def parse_fail_on(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[Threshold]:
    """``--fail-on`` conditions (see :mod:`peakopt.campaign.gates`); a usage error when one is malformed."""
    from peakopt.campaign.gates import Threshold, summary_fields
    from peakopt.campaign.summaries import MethodSummary

    fields = summary_fields(MethodSummary)
    try:
        return [Threshold.parse(text, fields) for text in value]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def errors_table(rows: Sequence[ScoreRow]) -> Table | None:
    """The failed runs' reasons per method, with their counts (None when nothing failed)."""
    from rich.table import Table

    from peakopt.campaign.gates import error_reasons

    reasons = error_reasons(rows)
    if not reasons:
        return None
    more = len(reasons) - REASONS_SHOWN
    caption = f"and {more} other reasons (the store's results.error column)" if more > 0 else None
    table = Table(title="errors", title_justify="left", caption=caption, caption_justify="left")
    for column in ("source", "rows", "reason"):
        table.add_column(column, justify="right" if column == "rows" else "left")
    for method, reason, count in reasons[:REASONS_SHOWN]:
        table.add_row(method, str(count), reason)
    return table


def summary_options(func: F) -> F:
    """``--json`` and ``--csv`` of the per-method summary (``report`` and ``stress``)."""
    return format_options("the summaries", stream=False)(func)


@dataclass(frozen=True)
class SummaryOptions:
    """How the summary is grouped (``--by``) and printed (``--json``, ``--csv``)."""

    by: tuple[str, ...]
    as_json: bool
    as_csv: bool
    shown: Shown


def summary_group(help_text: str) -> Callable[[F], F]:
    """:func:`by_sources` (``help_text``), :func:`summary_options` and :func:`shown_group`, as ``summary``.

    The command takes them as one :class:`SummaryOptions`.
    """
    return grouped(
        "summary", SummaryOptions, by_sources(help_text), summary_options, shown_group(column_names)
    )


def show_summaries(
    found: Sequence[MethodSummary],
    as_json: bool,
    as_csv: bool,
    title: str,
    rows: Sequence[ScoreRow] = (),
    table_format: str | None = None,
    ranked: Board | None = None,
    shown: Shown = HEADLINE_SHOWN,
    beside: Sequence[Table] = (),
    after: Sequence[Table] = (),
) -> None:
    """The tables on stderr (or stdout in ``table_format``); the summaries as JSON or CSV on stdout.

    With a leaderboard ``ranked`` of two sources or more, its tables come first, then the
    ``beside`` tables (the report's floor), and ``--json`` prints it as a second document, on
    the line after the summaries. The ``after`` tables (the report's inputs) come last.
    """
    emit(found, as_json, as_csv, stream=False)
    tables = board_tables(ranked) if ranked is not None else []
    missing = unranked_note(ranked) if ranked is not None else None
    if missing:
        note(missing)  # a leaderboard is never left out, nor a source from it, without a word
    if as_json and ranked is not None:
        click.echo(board_json(ranked), nl=False)
    reasons = errors_table(rows)
    # rows scored under sampled scenarios (score --samples) also get their Monte Carlo figures
    sampled = [monte_carlo_table(found, "Monte Carlo", shown)] if any(s.monte_carlo for s in found) else []
    summary = report_table(found, title, shown)
    show_tables(
        table_format,
        [*tables, *beside, summary, *sampled, *([reasons] if reasons else []), *after],
        summary,
    )


def gate(
    found: Sequence[MethodSummary], thresholds: Sequence[Threshold], rows: Sequence[ScoreRow] = ()
) -> None:
    """Fail (one ``Error:`` line, exit 1) when every row failed or a group crosses a threshold.

    Parameters
    ----------
    found
        The summaries printed.
    thresholds
        ``--fail-on`` conditions.
    rows
        The rows of a run, checked for all failed (``peakopt report`` passes none: it reads
        rows, it does not run them).
    """
    from peakopt.campaign.gates import all_failed, crossings

    failed = all_failed(rows)
    if failed:
        raise PeakoptError(failed)
    crossed = crossings(thresholds, found, lambda s: ", ".join(f"{k} {v}" for k, v in s.group.items()))
    if crossed:
        raise PeakoptError(f"--fail-on: {crossed}")


def fail_on_option(func: F) -> F:
    """``--fail-on FIELD OP NUMBER[%]``, repeatable (see :mod:`peakopt.campaign.gates`)."""
    return click.option(
        "--fail-on",
        multiple=True,
        callback=parse_fail_on,
        metavar="FIELD>N[%]",
        help="Exit 1 when a group of the summary crosses this threshold, e.g. 'gap_mean>5%', "
        "'safe_rate<100%', 'errors>0' (repeatable; fields: the --json numbers, joined by _; "
        "a group without the figure fails).",
    )(func)
