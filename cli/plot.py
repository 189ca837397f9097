"""``peakopt plot``: Gantt charts and load against capacity, schedules side by side."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from peakopt.cli.cluster import solve_options
from peakopt.cli.common import input_options, warn
from peakopt.cli.messages import quiet_option, wrote
from peakopt.cli.options import Renamed, seed_option, split_names
from peakopt.cli.outputs import REPLACES, claim
from peakopt.cli.targets import choose, targets
from peakopt.models import PeakoptError
from peakopt.models.extras import require

# The records' readers, the oracle, the heuristics and the models are imported by the functions
# that use them, so that `plot --help` imports no pydantic.
if TYPE_CHECKING:
    from peakopt.models import Machine, Schedule, SolveResult, Workflow

#: Where the schedules to draw are kept, in the order their options first appear.
ORDER = "peakopt.plot.order"


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    # click handles options in the order they first appear on the command line
    if value:
        ctx.meta.setdefault(ORDER, []).append(param.name)
    return value


def from_files(paths: tuple[str, ...], workflow: Workflow, machine: Machine) -> list[Schedule]:
    """The schedules of ``workflow`` on ``machine`` in records files (schedules, answers, references).

    Raw LLM answers are parsed and replayed literally, as ``peakopt score`` does.
    """
    from peakopt.cli.score_files import answer_records
    from peakopt.models import Schedule, Suite
    from peakopt.oracle.tables.score_rows import score_record

    suite = Suite(machines=(machine,), workflows=(workflow,))
    found = []
    for path in paths:
        for record in answer_records(path):
            if record.data is None:  # a torn or damaged line: say so, it may be the one wanted
                warn(f"{path}: line {record.line}: {record.error or 'unreadable'}; skipped")
                continue
            data = record.data
            if data.get("workflow") != workflow.id or data.get("machine") not in (None, machine.name):
                continue
            row = score_record(data, suite, line=record.line, error=record.error)
            label = row.source or data.get("solver") or Path(path).stem
            if row.starts is None:
                warn(f"{path}: line {record.line}: nothing to draw ({'; '.join(row.reasons)})")
                continue
            found.append(
                Schedule(workflow=workflow.id, machine=machine.name, starts=row.starts, source=label)
            )
        if not found:
            warn(f"{path}: no schedule of {workflow.id!r} on {machine.name!r}")
    return found


def optimum(
    workflow: Workflow, machine: Machine, reference: SolveResult | None, settings: dict[str, Any]
) -> SolveResult:
    """The reference result: from the references file if it has a schedule, else solved now."""
    if reference is not None and reference.starts is not None:
        return reference
    from peakopt.solver import solve  # OR-Tools: not for `plot --help`

    return solve(workflow, machine, **settings)


def _collect(
    ctx: click.Context,
    workflow: Workflow,
    machine: Machine,
    options: dict[str, Any],
    reference: SolveResult | None,
) -> tuple[list[Schedule], SolveResult | None]:
    """The schedules to draw, in the order their options came; the reference, solved if asked."""
    from peakopt.solver.heuristics import MethodError, run

    schedules: list[Schedule] = []
    for kind in ctx.meta.get(ORDER, []):
        if kind == "methods":
            for name in split_names(options["methods"]):
                try:
                    schedules.append(run(workflow, machine, name, seed=options["seed"]))
                except MethodError as exc:
                    raise click.BadParameter(str(exc), param_hint="'--method'") from None
        elif kind == "schedules":
            schedules.extend(from_files(options["schedules"], workflow, machine))
        elif kind == "optimal":
            settings = {
                "time_limit": options["time_limit"],
                "workers": options["workers"],
                "seed": options["seed"],
            }
            reference = optimum(workflow, machine, reference, settings)
            label = "optimal" if reference.status == "optimal" else f"best found ({reference.status})"
            schedule = reference.schedule
            if schedule is None:
                raise PeakoptError(f"no schedule found for {workflow.id!r} on {machine.name!r} in time")
            schedules.append(schedule.model_copy(update={"source": label}))
    if not schedules:
        raise click.UsageError("nothing to draw: give --method NAME, --schedules FILE or --optimal")
    return schedules, reference


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="INPUT...")
@click.option(
    "--workflow", "workflow_id", metavar="ID", help="The workflow to draw, when the inputs hold several."
)
@solve_options(per="for --optimal")
@click.option(
    "-m",
    "--method",
    "methods",
    multiple=True,
    callback=_remember,
    metavar="NAME[,NAME...]",
    help="Draw a heuristic's schedule (see peakopt schedule --list); repeatable.",
)
@click.option(
    "-s",
    "--schedules",
    "schedules",
    cls=Renamed,
    old=("--schedule",),
    multiple=True,
    callback=_remember,
    metavar="SCHEDULES.jsonl|LOG.eval",
    help=(
        "Draw the schedules in a records file (schedules, raw LLM answers, references) "
        "or an Inspect .eval log; repeatable."
    ),
)
@click.option(
    "--optimal",
    is_flag=True,
    callback=_remember,
    help="Draw the optimum (from --reference, else solved now).",
)
@click.option(
    "-r",
    "--reference",
    "reference_path",
    metavar="REFS.jsonl",
    help="Reference results (peakopt solve -o): gap to optimum in the titles.",
)
@seed_option("Seed of randomised methods and the solver.")
@click.option("--dependencies", is_flag=True, help="Draw every dependency arrow (broken ones always are).")
@click.option(
    "--colour",
    type=click.Choice(["tool", "class"]),
    default="tool",
    show_default=True,
    help="Colour bars by the tool's server or by resource class.",
)
@click.option(
    "-o", "--output", required=True, metavar="FILE", help=f"Picture to write: .png, .svg or .pdf. {REPLACES}"
)
@input_options
@quiet_option
@click.pass_context
def plot(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    workflow_id: str | None,
    machines: tuple[str, ...],
    reference_path: str | None,
    dependencies: bool,
    colour: str,
    output: str,
    fmt: str | None,
    cpu: str,
    keep_dummies: bool,
    **options: Any,
) -> None:
    """Draw schedules of one workflow side by side: Gantt chart above the load on each resource.

    The overload above a capacity is shaded: orange (hatched) where a step
    alone exceeds it and no schedule could avoid it, red where it is avoidable.

    Example: peakopt plot bundled:refund --method asap --optimal -o refund.png
    """
    # matplotlib is the plot extra, imported only here: `plot --help` does not need it
    require("matplotlib", "peakopt plot")
    from peakopt.cli.score_files import load_references
    from peakopt.oracle import evaluate
    from peakopt.oracle.judge.evaluate import with_reference
    from peakopt.plots.schedule_plot import PICTURE_SUFFIXES, Drawn, figure, save_figure

    if Path(output).suffix.lower() not in PICTURE_SUFFIXES:
        raise click.BadParameter("write a .png, .svg or .pdf file", param_hint="'-o'")
    inputs = [*paths, *machines, *options["schedules"], *([reference_path] if reference_path else [])]
    out = claim(output, inputs)
    read = {"format": fmt, "cpu": cpu, "keep_dummies": keep_dummies}
    workflow, machine = choose(targets(paths, machines, read), workflow_id)
    references = load_references(reference_path, [(workflow, machine)])
    schedules, reference = _collect(
        ctx, workflow, machine, options, references.get((workflow.id, machine.name))
    )
    drawn = []
    for schedule in schedules:
        score = with_reference(evaluate(workflow, machine, schedule), reference)
        drawn.append(Drawn(schedule.source or "schedule", schedule, score, score.gap, reference is not None))
    picture = figure(workflow, machine, drawn, dependencies=dependencies, colour_by=colour)
    with out.replacing() as temp:
        save_figure(picture, temp)
    wrote(output, ", ".join(d.label for d in drawn))
