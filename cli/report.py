"""``peakopt report``: per-method statistics of stress stores, scores files and Inspect logs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import click

from peakopt.campaign.ranges import COUNT_OR_NONE
from peakopt.cli.common import warn
from peakopt.cli.eval_report import EVAL_REPORT, check_logs, eval_report, report_format_option
from peakopt.cli.exports import check_export
from peakopt.cli.messages import note, plural, quiet_option, wrote
from peakopt.cli.options import check_by, grouped, split_option
from peakopt.cli.outputs import REPLACES, claim
from peakopt.cli.report_inputs import (
    ReportInput,
    Trivial,
    cells_table,
    fields_table,
    floor_caption,
    floor_cells,
    read_inputs,
    split_rows,
    trivial_answers,
    with_task_suite,
)
from peakopt.cli.score_files import load_references, scope_pairs
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
from peakopt.models.extras import require
from peakopt.plots.cells import Cells

# The campaign, the oracle, the models, the plots and rich are imported by the functions that use
# them, so that `report --help` imports no pydantic.
if TYPE_CHECKING:
    from rich.table import Table

    from peakopt.campaign.gates import Threshold
    from peakopt.models import Machine, SolveResult, Workflow
    from peakopt.oracle import ScoreRow
    from peakopt.oracle.judge.references import Checked
    from peakopt.plots.html import WorstCase
    from peakopt.plots.schedule_plot import Drawn


@dataclass(frozen=True)
class Given:
    """``--suite`` and ``--reference``: what a scores file was scored on, to draw it and state its floor."""

    suites: tuple[str, ...]
    reference_path: str | None


#: ``--suite`` and ``--reference``, reaching ``report`` as ``given``, one :class:`Given`.
given_group = grouped(
    "given",
    Given,
    click.option(
        "--suite",
        "suites",
        multiple=True,
        metavar="PATH",
        help="The inputs scored, to draw a scores file's worst cases and state its floor (an Inspect "
        "log's task names its own suite, used without this option).",
    ),
    click.option(
        "-r",
        "--reference",
        "reference_path",
        metavar="REFS.jsonl",
        help="Reference results, to draw the optimum next to a scores file's worst cases and state "
        "its floor (an Inspect log's task names its own).",
    ),
)


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
@given_group
@split_option(
    "needs each input's suite and references (a log's task names them, a store holds them; "
    "--suite and --reference for a scores file)"
)
@report_format_option
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
    given: Given,
    table_format: str | None,
    shown: Shown,
    fail_on: list[Threshold],
    split: str,
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

    Then the inputs: per input its kind, sources, suite by name and content
    hash, settings, split, seeds, counts, Inspect task and arguments, date,
    and the peakopt version and oracle that judged it (or "not recorded");
    --json prints them last, as one more JSON document (the report's own
    provenance, with an "inputs" list: one object per input).
    Every table follows the leaderboard's order. Where an input's suite and
    references are known (a log's task names both, a store holds them;
    --suite and --reference for a scores file), the floor comes after the
    leaderboard: the trivial answers (every step at 0, one at a time, ASAP)
    scored on the same pairs. --split hard keeps only the pairs none of them
    solves.

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

    --table-format md|latex prints the tables on stdout as Markdown or LaTeX;
    --table-format eval-report prints Inspect logs' Evaluation Report section
    (an eval README's: per log its model, solver, split, samples, efficiency
    with its interval, safe and valid rates and date, best first, then the
    exact inspect eval commands and the code that judged them).

    Example: peakopt report gpt.eval claude.eval -o report.html
    """
    from peakopt.campaign.provenance import other_oracles, report_facts
    from peakopt.campaign.summaries import summaries
    from peakopt.oracle.tables.leaderboard import board, in_rank_order

    check_formats(as_json, as_csv)
    check_export(table_format, as_json, as_csv)
    out = claim(output, [*paths, *given.suites, *([given.reference_path] if given.reference_path else [])])
    if out is not None:
        require("matplotlib", "report -o (the HTML report)")  # before any work
    # the --suite and --reference inputs are read (and the references checked) before anything is printed
    drawn = drawing_inputs(given.suites, given.reference_path)
    inputs = [_with_suite(found, drawn) for found in read_inputs(paths, strict, drawn)]
    if table_format == EVAL_REPORT:
        check_logs(inputs)
    trivial = trivial_answers(inputs)
    inputs = split_rows(inputs, trivial, split)
    if split == "hard":
        trivial = trivial_answers(inputs)
    rows = [row for found in inputs for row in found.rows]
    check_by(rows, by)
    ranked = board(rows)
    found = in_rank_order(summaries(rows, by), lambda s: s.group.get("source"), ranked)
    title = f"peakopt report: {plural(len(rows), 'row')} from {_named(paths)}"
    provenance = [i.provenance.fields() for i in inputs]
    facts = report_facts([i.provenance for i in inputs], split)
    for other in other_oracles([i.provenance for i in inputs]):
        warn(
            f"{other.path} was judged by oracle {other.oracle}, this report's is {facts['oracle']}: "
            "its rows are as that oracle gave them (rescore its answers to judge them anew)"
        )
    floor_table = [_floor_table(trivial)] if trivial is not None else []
    inputs_table = fields_table("inputs", Cells(made_line(facts), provenance))
    if trivial is None:
        note(NO_FLOOR)
    if table_format == EVAL_REPORT:
        click.echo(eval_report(inputs, facts), nl=False)
    else:
        show_summaries(
            found, as_json, as_csv, title, rows, table_format, ranked, shown, floor_table, [inputs_table]
        )
    if as_json:  # the last document: the report's provenance, and each input's
        click.echo(json.dumps(facts | {"inputs": [i.provenance.data() for i in inputs]}, default=str))
    if out is not None:
        from peakopt.plots.html import render_report  # matplotlib: only a report with -o draws

        cases = [case for i in inputs for case in worst_drawings(i, worst)]
        page = render_report(
            rows,
            title=f"peakopt report: {facts['suites']} ({plural(len(paths), 'input')})",
            worst=cases,
            listed=worst,
            columns=report_columns(shown),
            board=ranked,
            provenance=Cells(made_line(facts), provenance),
            floor=None if trivial is None else Cells(floor_caption(trivial), floor_cells(trivial)),
        )
        out.write_text(page)
        wrote(output, f"{plural(len(found), 'group')}, {plural(len(cases), 'worst case')} drawn")
    gate(found, fail_on)


#: Why a report has no floor.
NO_FLOOR = (
    "no floor (the trivial answers' rows): no input names its suite and references (a log's task "
    "names both, a store holds them; give --suite and --reference for a scores file)"
)


def made_line(facts: Mapping[str, str]) -> str:
    """The report's own provenance on one line: when, by which peakopt and oracle, of which suites."""
    return "; ".join(f"{key} {value}" for key, value in facts.items() if key != "inputs")


def _named(paths: Sequence[str]) -> str:
    return paths[0] if len(paths) == 1 else f"{len(paths)} inputs"


def _with_suite(found: ReportInput, given: tuple[Scopes | None, Checked]) -> ReportInput:
    """A log's input with its suite: ``--suite``'s when given, else the one its task names."""
    if found.log is None:
        return found
    scopes, references = given
    if scopes is not None:
        return replace(found, scopes=scopes, references=references)
    return with_task_suite(found, note)


def _floor_table(trivial: Trivial) -> Table:
    return cells_table("floor: trivial answers", Cells(floor_caption(trivial), floor_cells(trivial)))


def drawing(
    workflow: Workflow, machine: Machine, label: str, starts: dict[str, float], gap: float | None
) -> Drawn:
    """One schedule of a worst case, judged by the oracle."""
    from peakopt.models import Schedule
    from peakopt.oracle import evaluate
    from peakopt.plots.schedule_plot import Drawn

    schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=starts, source=label)
    return Drawn(label, schedule, evaluate(workflow, machine, schedule), gap)


def _case(
    method: str, row: ScoreRow, workflow: Workflow, machine: Machine, ref: SolveResult | None
) -> WorstCase:
    from peakopt.plots.html import WorstCase
    from peakopt.plots.worst import case_title

    drawn = [drawing(workflow, machine, method, row.starts or {}, row.gap)]
    if ref is not None and ref.starts is not None:
        label = "optimal" if ref.status == "optimal" else f"best found ({ref.status})"
        drawn.append(drawing(workflow, machine, label, ref.starts, 0.0 if ref.status == "optimal" else None))
    return WorstCase(case_title(method, row, workflow.id, machine.name), workflow, machine, drawn, method)


def drawing_inputs(suites: tuple[str, ...], reference_path: str | None) -> tuple[Scopes | None, Checked]:
    """The inputs a scores file was scored on (None without ``--suite``) and its checked references."""
    scopes = Scopes.read(suites, None, "peak", False) if suites else None
    return scopes, load_references(reference_path, scope_pairs(scopes) if scopes else [])


def worst_drawings(found: ReportInput, count: int) -> list[WorstCase]:
    """Each method's ``count`` worst cases, next to the optimum, from a store, a scores file or a log.

    A scores file names its workflows only: without its suite (``--suite``) there is nothing to
    draw; a log is drawn on the suite its task names (:func:`~peakopt.cli.report_inputs.with_task_suite`).
    """
    from peakopt.campaign.export import worst_cases
    from peakopt.campaign.storage import is_store_path
    from peakopt.campaign.store import Store
    from peakopt.oracle.tables.aggregate import group_rows
    from peakopt.plots.worst import pick_worst

    if count <= 0:
        return []
    if is_store_path(found.path):
        store = Store(found.path, read_only=True)
        try:
            return [
                _case(c.method, c.row, c.workflow, c.machine, c.reference)
                for c in worst_cases(store, store.methods(), count)
            ]
        finally:
            store.close()
    scopes, references = found.scopes, found.references
    if scopes is None:
        return []
    cases = []
    for (source,), members in group_rows(found.rows, ("source",)).items():
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
