"""``peakopt report``: per-method statistics of a stress store or a scores file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.table import Table

from peakopt.campaign.export import worst_cases
from peakopt.campaign.gates import Threshold, all_failed, crossings, error_reasons, summary_fields
from peakopt.campaign.ranges import COUNT_OR_NONE
from peakopt.campaign.storage import is_store_path
from peakopt.campaign.store import Store, read_score_rows
from peakopt.campaign.stress import ERROR
from peakopt.cli.common import warn
from peakopt.cli.exports import check_export, format_option, show_tables
from peakopt.cli.messages import note, plural, quiet_option, wrote
from peakopt.cli.options import by_option, check_by
from peakopt.cli.outputs import REPLACES, claim
from peakopt.cli.score import load_references, read_scores, scope_pairs
from peakopt.cli.tables import (
    board_json,
    board_tables,
    check_formats,
    emit,
    format_options,
    monte_carlo_table,
    stacked,
)
from peakopt.cli.targets import Scopes
from peakopt.evals.logs import is_eval_log, log_score_rows
from peakopt.instances import InputError
from peakopt.models import Machine, PeakoptError, Schedule, SolveResult, Workflow
from peakopt.models.extras import require
from peakopt.oracle import ScoreRow, aggregate, evaluate
from peakopt.oracle.judge.references import Checked
from peakopt.oracle.tables.aggregate import ScoreSummary, group_rows
from peakopt.oracle.tables.leaderboard import Board, board
from peakopt.oracle.tables.pairs import with_settings
from peakopt.plots.columns import Column, summary_columns, unranked_note
from peakopt.plots.worst import case_title, pick_worst

if TYPE_CHECKING:
    from peakopt.plots.html import WorstCase
    from peakopt.plots.schedule_plot import Drawn

F = TypeVar("F", bound=Callable[..., Any])

#: Error reasons listed under the summary; the store's ``error`` column has them all.
REASONS_SHOWN = 10

#: --by fields (``method`` is accepted for ``source``, the method that made a row).
BY_FIELDS = ("source", "setting", "tier", "machine", "workflow")


class MethodSummary(ScoreSummary):
    """:class:`~peakopt.oracle.tables.aggregate.ScoreSummary` and the count of failed runs (``error``)."""

    errors: int


def summaries(rows: Sequence[ScoreRow], by: Sequence[str] = ("source",)) -> list[MethodSummary]:
    """Aggregates per group (``by`` of :data:`BY_FIELDS`), by :func:`peakopt.oracle.aggregate`.

    Rows judged under different settings (prompt setting, noise, samples, execution) are never
    merged: every setting they differ in is grouped by too
    (:func:`~peakopt.oracle.tables.pairs.with_settings`).
    """
    return [
        MethodSummary(**summary.model_dump(), errors=summary.invalid_reasons.get(ERROR, 0))
        for summary in aggregate(rows, with_settings(rows, by), intervals=True)
    ]


def report_table(found: Sequence[MethodSummary], title: str) -> Table:
    """Per group: failed runs, then the summary columns of :mod:`peakopt.plots.columns`."""
    table = Table(title=title, title_justify="left")
    names = list(found[0].group) if found else ["source"]
    columns = report_columns()
    for name in names:
        # a group's name is never cut to fit a narrow terminal: the figures wrap instead
        shown = [len(str(s.group.get(name) or "-")) for s in found]
        table.add_column(name, no_wrap=True, min_width=max([len(name), *shown]))
    for header, _ in columns:
        table.add_column(header, justify="right")
    for s in found:
        groups = (str(v) if v is not None else "-" for v in s.group.values())
        table.add_row(*groups, *(stacked(cell(s)) for _, cell in columns))
    return table


def report_columns() -> list[Column]:
    """The summary columns of the report's terminal table and of its HTML page: one list for both."""
    return summary_columns(gaps=True, failed=ERROR)


def by_sources(help_text: str) -> Callable[[F], F]:
    """``--by``: the summary per source (the method), and also per these fields of :data:`BY_FIELDS`."""
    return by_option(BY_FIELDS, help_text, first="source")


def parse_fail_on(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[Threshold]:
    """``--fail-on`` conditions (see :mod:`peakopt.campaign.gates`); a usage error when one is malformed."""
    fields = summary_fields(MethodSummary)
    try:
        return [Threshold.parse(text, fields) for text in value]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def read_rows(path: str) -> list[ScoreRow]:
    """Score rows of a results store (SQLite, opened read-only), a scores file or an Inspect log.

    A scores file is what ``peakopt score -o`` writes; of an Inspect log of
    ``peakopt/schedule``, the rows its scorer kept are read.

    A file named like a store (``.sqlite``, ``.db``...) or starting with SQLite's header is
    read as a store only: a damaged one is an error, never read as JSON Lines.
    """
    source = Path(path)
    if is_eval_log(source):
        return log_score_rows(source, warn)  # says what a missing path, a directory, another log is
    if not source.exists():
        raise InputError(path, "", "does not exist")
    return read_score_rows(source) if is_store_path(source) else read_scores(path)


def errors_table(rows: Sequence[ScoreRow]) -> Table | None:
    """The failed runs' reasons per method, with their counts (None when nothing failed)."""
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


def show_summaries(
    found: Sequence[MethodSummary],
    as_json: bool,
    as_csv: bool,
    title: str,
    rows: Sequence[ScoreRow] = (),
    table_format: str | None = None,
    ranked: Board | None = None,
) -> None:
    """The tables on stderr (or stdout in ``table_format``); the summaries as JSON or CSV on stdout.

    With a leaderboard ``ranked`` of two sources or more, its tables come first
    and ``--json`` prints it as a second document, on the line after the summaries.
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
    sampled = [monte_carlo_table(found, "Monte Carlo")] if any(s.monte_carlo for s in found) else []
    show_tables(
        table_format, [*tables, report_table(found, title), *sampled, *([reasons] if reasons else [])]
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


@click.command("report")
@click.argument("paths", metavar="RESULTS.sqlite|SCORES.jsonl|LOG.eval...", nargs=-1, required=True)
@by_sources(f"Also group by these comma-separated fields ({','.join(BY_FIELDS[1:])}).")
@summary_options
@click.option(
    "-o", "--output", metavar="REPORT.html", help=f"Also write a self-contained HTML report. {REPLACES}"
)
@click.option(
    "--worst",
    type=COUNT_OR_NONE,
    default=3,
    show_default=True,
    help="Each method's K worst cases: Gantt charts of the largest gaps (and, for a scores file, "
    "of the most unsafe answers); a table of the K most unsafe and first K invalid answers, with reasons.",
)
@click.option(
    "--suite",
    "suites",
    multiple=True,
    metavar="PATH",
    help="SCORES.jsonl only: the inputs scored, to draw the worst cases.",
)
@click.option(
    "-r",
    "--reference",
    "reference_path",
    metavar="REFS.jsonl",
    help="SCORES.jsonl only: reference results, to draw the optimum next to the worst cases.",
)
@format_option
@fail_on_option
@quiet_option
def report(
    paths: tuple[str, ...],
    by: tuple[str, ...],
    as_json: bool,
    as_csv: bool,
    output: str | None,
    worst: int,
    suites: tuple[str, ...],
    reference_path: str | None,
    table_format: str | None,
    fail_on: list[Threshold],
) -> None:
    """Per-method statistics of stress runs (SQLite stores), scores or Inspect logs, and a leaderboard.

    Scores are what peakopt score -o writes; an Inspect log of peakopt/schedule
    holds its scorer's rows, the model as the method. The rows of every input
    are read together, each row's source (method, model) saying whose it is.

    With two sources or more, a leaderboard comes first: the sources ranked by
    mean efficiency (OPT / makespan, 0 for an unsafe or invalid answer) with
    its 95 % bootstrap interval and pair count, and the paired differences of
    every two sources on the workflow × machine (× setting) pairs both
    answered, with their intervals. --json prints it as a second JSON document,
    on the line after the summaries.

    Per method (and per --by group): rows, failed runs, invalid schedules,
    safe rate, mean / median / p95 / max gap to the proven optimum (over safe
    rows), the largest gap to the lower bound, mean avoidable cva, mean
    strict and safe MRU.

    With -o, also writes one HTML file (styles and pictures embedded): the
    tables, the gap profile per method (share of pairs within x % of the
    optimum), makespan against cva, bars with 95 % intervals per tier and
    machine, and the worst cases: Gantt charts, and the unsafe and invalid
    answers with their reasons.

    A store is opened read-only and never written. --fail-on makes the command
    exit 1 when a group of the summary crosses a threshold (for CI).

    --table-format md|latex prints the tables on stdout as Markdown or LaTeX.

    Example: peakopt report gpt.eval claude.eval -o report.html
    """
    check_formats(as_json, as_csv)
    check_export(table_format, as_json, as_csv)
    out = claim(output, [*paths, *suites, *([reference_path] if reference_path else [])])
    if out is not None:
        require("matplotlib", "report -o (the HTML report)")  # before any work
    # the rows of every input together: each row's source (method, model) says whose it is
    read = {path: read_rows(path) for path in paths}
    rows = [row for found_rows in read.values() for row in found_rows]
    check_by(rows, by)
    # the inputs of the drawings are read (and the references checked) before anything is printed
    drawn = drawing_inputs(suites, reference_path) if out is not None else None
    found = summaries(rows, by)
    ranked = board(rows)
    inputs = paths[0] if len(paths) == 1 else f"{len(paths)} inputs"
    title = f"peakopt report: {plural(len(rows), 'row')} from {inputs}"
    show_summaries(found, as_json, as_csv, title, rows, table_format, ranked)
    if out is not None:
        from peakopt.plots.html import render_report  # matplotlib: only a report with -o draws

        cases = [case for path, own in read.items() for case in worst_drawings(path, own, worst, drawn)]
        page = render_report(
            rows,
            title=f"peakopt report: {Path(paths[0]).name if len(paths) == 1 else f'{len(paths)} inputs'}",
            worst=cases,
            listed=worst,
            columns=report_columns(),
            board=ranked,
        )
        out.write_text(page)
        wrote(output, f"{plural(len(found), 'group')}, {plural(len(cases), 'worst case')} drawn")
    gate(found, fail_on)


def drawing(
    workflow: Workflow, machine: Machine, label: str, starts: dict[str, float], gap: float | None
) -> Drawn:
    """One schedule of a worst case, judged by the oracle."""
    from peakopt.plots.schedule_plot import Drawn

    schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=starts, source=label)
    return Drawn(label, schedule, evaluate(workflow, machine, schedule), gap)


def _case(
    method: str, row: ScoreRow, workflow: Workflow, machine: Machine, ref: SolveResult | None
) -> WorstCase:
    from peakopt.plots.html import WorstCase

    drawn = [drawing(workflow, machine, method, row.starts or {}, row.gap)]
    if ref is not None and ref.starts is not None:
        label = "optimal" if ref.status == "optimal" else f"best found ({ref.status})"
        drawn.append(drawing(workflow, machine, label, ref.starts, 0.0 if ref.status == "optimal" else None))
    return WorstCase(case_title(method, row, workflow.id, machine.name), workflow, machine, drawn)


def drawing_inputs(suites: tuple[str, ...], reference_path: str | None) -> tuple[Scopes | None, Checked]:
    """The inputs a scores file was scored on (None without ``--suite``) and its checked references."""
    scopes = Scopes.read(suites, None, "peak", False) if suites else None
    return scopes, load_references(reference_path, scope_pairs(scopes) if scopes else [])


def worst_drawings(
    path: str, rows: Sequence[ScoreRow], count: int, inputs: tuple[Scopes | None, Checked] | None
) -> list[WorstCase]:
    """Each method's ``count`` worst cases, next to the optimum, from a store or a scores file.

    A scores file names its workflows only: without a suite in ``inputs`` there is nothing to draw.
    """
    if count <= 0:
        return []
    if is_store_path(path):
        store = Store(path, read_only=True)
        try:
            return [
                _case(c.method, c.row, c.workflow, c.machine, c.reference)
                for c in worst_cases(store, store.methods(), count)
            ]
        finally:
            store.close()
    scopes, references = inputs or (None, {})
    if scopes is None:
        return []
    cases = []
    for (source,), members in group_rows(rows, ("source",)).items():
        worst = pick_worst([r for r in members if r.starts], count)
        for row in worst.by_gap + worst.unsafe:
            suite = scopes.of({"workflow": row.workflow})
            try:
                workflow, machine = suite.workflow(str(row.workflow)), suite.machine(str(row.machine))
            except KeyError:
                warn(f"{row.workflow} on {row.machine}: not in the --suite inputs; not drawn")
                continue
            cases.append(
                _case(
                    source or "schedule", row, workflow, machine, references.get((workflow.id, machine.name))
                )
            )
    return cases
