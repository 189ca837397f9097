"""``peakopt report``: per-method statistics of a stress store or a scores file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from peakopt.campaign.export import worst_cases
from peakopt.campaign.gates import Threshold
from peakopt.campaign.ranges import COUNT_OR_NONE
from peakopt.campaign.storage import is_store_path
from peakopt.campaign.store import Store, read_score_rows
from peakopt.campaign.summaries import summaries
from peakopt.cli.common import warn
from peakopt.cli.exports import check_export, format_option
from peakopt.cli.messages import note, plural, quiet_option, wrote
from peakopt.cli.options import check_by
from peakopt.cli.outputs import REPLACES, claim
from peakopt.cli.score_files import load_references, read_scores, scope_pairs
from peakopt.cli.summaries import (
    BY_FIELDS,
    by_sources,
    column_names,
    fail_on_option,
    gate,
    report_columns,
    show_summaries,
    summary_options,
)
from peakopt.cli.tables import Shown, check_formats, shown_group
from peakopt.cli.targets import Scopes
from peakopt.evals.logs import is_eval_log, log_score_rows, read_log
from peakopt.instances import InputError
from peakopt.models import Machine, PeakoptError, Schedule, SolveResult, Workflow
from peakopt.models.extras import require
from peakopt.oracle import ScoreRow, evaluate
from peakopt.oracle.judge.references import Checked
from peakopt.oracle.tables.aggregate import group_rows
from peakopt.oracle.tables.leaderboard import board
from peakopt.plots.worst import case_title, pick_worst

if TYPE_CHECKING:
    from peakopt.plots.html import WorstCase
    from peakopt.plots.schedule_plot import Drawn


def read_rows(path: str, strict: bool = False) -> list[ScoreRow]:
    """Score rows of a results store (SQLite, opened read-only), a scores file or an Inspect log.

    A scores file is what ``peakopt score -o`` writes; of an Inspect log of
    ``peakopt/schedule``, the rows its scorer kept are read. ``strict``: what would be a
    warning about a log (incomplete, errored samples) is an error.

    A file named like a store (``.sqlite``, ``.db``...) or starting with SQLite's header is
    read as a store only: a damaged one is an error, never read as JSON Lines.
    """
    source = Path(path)
    if is_eval_log(source):

        def refuse(message: str) -> None:
            raise InputError(path, "", message.removeprefix(f"{path}: ") + " (--strict)")

        # says what a missing path, a directory, another log is
        return log_score_rows(source, refuse if strict else warn)
    if not source.exists():
        raise InputError(path, "", "does not exist")
    return read_score_rows(source) if is_store_path(source) else read_scores(path)


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
    help="The inputs scored, to draw a scores file's worst cases (an Inspect log's task names its own "
    "suite, used without this option).",
)
@click.option(
    "-r",
    "--reference",
    "reference_path",
    metavar="REFS.jsonl",
    help="Reference results, to draw the optimum next to a scores file's worst cases (an Inspect "
    "log's task names its own).",
)
@format_option
@shown_group(column_names)
@fail_on_option
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse (exit 1) an Inspect log that failed, holds no scores or is incomplete, instead of "
    "skipping it (or reading what it holds) with a warning.",
)
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
    shown: Shown,
    fail_on: list[Threshold],
    strict: bool,
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

    An Inspect log whose evaluation failed or that holds no scores is
    skipped with one warning naming it and why (--strict: refused, and an
    incomplete log too); a log's worst cases are drawn on the suite its task
    names. A store is opened read-only and never written. --fail-on makes
    the command exit 1 when a group of the summary crosses a threshold (for CI).

    --table-format md|latex prints the tables on stdout as Markdown or LaTeX.

    Example: peakopt report gpt.eval claude.eval -o report.html
    """
    check_formats(as_json, as_csv)
    check_export(table_format, as_json, as_csv)
    out = claim(output, [*paths, *suites, *([reference_path] if reference_path else [])])
    if out is not None:
        require("matplotlib", "report -o (the HTML report)")  # before any work
    # the rows of every input together: each row's source (method, model) says whose it is
    read = read_inputs(paths, strict)
    rows = [row for found_rows in read.values() for row in found_rows]
    check_by(rows, by)
    # the inputs of the drawings are read (and the references checked) before anything is printed
    drawn = drawing_inputs(suites, reference_path) if out is not None else None
    found = summaries(rows, by)
    ranked = board(rows)
    inputs = paths[0] if len(paths) == 1 else f"{len(paths)} inputs"
    title = f"peakopt report: {plural(len(rows), 'row')} from {inputs}"
    show_summaries(found, as_json, as_csv, title, rows, table_format, ranked, shown)
    if out is not None:
        from peakopt.plots.html import render_report  # matplotlib: only a report with -o draws

        cases = [case for path, own in read.items() for case in worst_drawings(path, own, worst, drawn)]
        page = render_report(
            rows,
            title=f"peakopt report: {Path(paths[0]).name if len(paths) == 1 else f'{len(paths)} inputs'}",
            worst=cases,
            listed=worst,
            columns=report_columns(shown),
            board=ranked,
        )
        out.write_text(page)
        wrote(output, f"{plural(len(found), 'group')}, {plural(len(cases), 'worst case')} drawn")
    gate(found, fail_on)


def read_inputs(paths: Sequence[str], strict: bool) -> dict[str, list[ScoreRow]]:
    """The rows of each input; an Inspect log that cannot be used is skipped with a warning.

    Unless ``strict``: then it is an error, as any other input that cannot be read always is.
    When no input is left, the first log's error is raised.

    Raises
    ------
    InputError
        For an input that cannot be read (see above).
    """
    read: dict[str, list[ScoreRow]] = {}
    skipped: list[InputError] = []
    for path in paths:
        try:
            read[path] = read_rows(path, strict)
        except InputError as exc:
            if strict or not is_eval_log(Path(path)):
                raise
            skipped.append(exc)
    if not read:
        first = skipped[0]
        raise InputError(first.source, first.item, first.rule)
    for error in skipped:
        warn(f"skipped {error.source}: {error.rule}")
    return read


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


def log_inputs(path: str) -> tuple[Scopes | None, Checked]:
    """The suite and references an Inspect log's task names, to draw its worst cases (said on stderr).

    None (with a warning) when the log names no suite or it cannot be read any more.
    """
    log = read_log(path)
    suite, reference = log.metadata.get("suite"), log.metadata.get("reference")
    if not isinstance(suite, str):
        warn(f"{path}: the log names no suite: its worst cases are not drawn (give --suite)")
        return None, {}
    try:
        scopes = Scopes.read([suite], None, "peak", False)
        pairs = scope_pairs(scopes)
        references = load_references(reference, pairs) if isinstance(reference, str) else {}
    except PeakoptError as exc:
        warn(f"{path}: its task's suite {suite} cannot be read ({exc}): its worst cases are not drawn")
        return None, {}
    note(f"{path}: drawing its worst cases on the suite its task names, {suite}")
    return scopes, references


def worst_drawings(
    path: str, rows: Sequence[ScoreRow], count: int, inputs: tuple[Scopes | None, Checked] | None
) -> list[WorstCase]:
    """Each method's ``count`` worst cases, next to the optimum, from a store, a scores file or a log.

    A scores file names its workflows only: without a suite in ``inputs`` there is nothing to
    draw. An Inspect log without one is drawn on the suite its task names (:func:`log_inputs`).
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
    if scopes is None and is_eval_log(Path(path)):
        scopes, references = log_inputs(path)
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
