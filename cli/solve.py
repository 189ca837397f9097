"""``peakopt solve``: reference schedules for every workflow × machine, in parallel, resumable."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from peakopt.campaign.ranges import COUNT, Finite
from peakopt.cli.cluster import (
    ExecutorOptions,
    SolveOptions,
    executors_options,
    progress_bar,
    solving_options,
    start,
)
from peakopt.cli.common import ReadOptions, read_options, warn
from peakopt.cli.group import interrupted
from peakopt.cli.messages import console, note, plural, print_tables, quiet_option, resume_hint, wrote
from peakopt.cli.options import grouped, seed_option
from peakopt.cli.outputs import claim
from peakopt.cli.targets import targets
from peakopt.instances.errors import OutputError
from peakopt.models import PeakoptError
from peakopt.solver.backends import BUILT_IN as BACKENDS
from peakopt.solver.names import ROBUST, SAMPLES, Robust

# The campaign's runner, its reference store and the models are imported by the functions that
# use them, so that `solve --help` imports no pydantic.
if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from peakopt.campaign.executors import Executor, Where
    from peakopt.campaign.jsonl import JsonLinesReferences
    from peakopt.campaign.solves import Sink, SolveItem
    from peakopt.models import SolveResult

#: A solve running longer than this shows its incumbent and bound (seconds).
LONG_SOLVE = 2.0


def _describe(job: SolveItem, incumbent: float | None, bound: float) -> str:
    best = "none yet" if incumbent is None else f"{incumbent:g}"
    return f"{job.workflow.id} × {job.machine.name}: makespan {best}, bound {bound:g}"


def solve_all(todo: list[SolveItem], executor: Executor, sink: Sink, console: Console) -> list[SolveResult]:
    """Solve the jobs on the executor, each record written as it finishes, under a progress bar."""
    from peakopt.campaign.runner import run_work
    from peakopt.campaign.solves import SOLVES

    seen: dict[int, float] = {}
    running = {job.index: job for job in todo}
    with progress_bar(console, "solve", "solves") as bar:
        task = bar.add_task("", total=len(todo))

        def finished(job: SolveItem, result: SolveResult) -> None:
            bar.advance(task)
            del running[job.index]

        def messages(found: list[Any]) -> None:
            _show_long(found, running, seen, bar, task)

        return list(run_work(executor, SOLVES, todo, sink.write, progress=finished, messages=messages))


def _show_long(
    messages: list[tuple[int, float | None, float]],
    running: dict[int, SolveItem],
    seen: dict[int, float],
    bar: Progress,
    task: Any,
) -> None:
    """Show the latest incumbent and bound of a solve that has reported for a while."""
    latest = messages[-1] if messages else None
    if latest is None or latest[0] not in running:
        return
    first = seen.setdefault(latest[0], time.monotonic())
    if time.monotonic() - first > LONG_SOLVE:
        bar.update(task, description=_describe(running[latest[0]], latest[1], latest[2]))


def summary_table(results: list[SolveResult], seconds: float) -> Table:
    """Count per status, mean lower-to-upper gap, time."""
    from rich.table import Table

    table = Table(title=f"{plural(len(results), 'solve')} in {seconds:.1f} s")
    for column in ("status", "count", "mean gap", "mean seconds", "max seconds"):
        table.add_column(column, justify="left" if column == "status" else "right")
    for status in sorted({r.status for r in results}):
        rows = [r for r in results if r.status == status]
        gaps = [g for r in rows if (g := _bound_gap(r)) is not None]
        mean_gap = f"{sum(g for g in gaps if g is not None) / len(gaps):.2%}" if gaps else "-"
        times = [r.seconds for r in rows]
        table.add_row(status, str(len(rows)), mean_gap, f"{sum(times) / len(times):.3f}", f"{max(times):.3f}")
    return table


def _bound_gap(result: SolveResult) -> float | None:
    """(makespan − lower bound) / makespan, when both are known."""
    if result.makespan is None or result.lower_bound is None:
        return None
    return (result.makespan - result.lower_bound) / result.makespan if result.makespan > 0 else 0.0


def _resume_is_default(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        warn("--resume is what a rerun does now; the flag goes in the next release")
    return value


@dataclass(frozen=True)
class RobustOptions:
    """``--robust`` and the scenarios it chooses on: ``--samples``, ``--noise``, ``--noise-demand``."""

    robust: Robust | None
    samples: int | None
    noise: float | None
    noise_demand: float | None


#: ``--robust`` ... ``--noise-demand``, reaching the command as ``robust``, one :class:`RobustOptions`.
robust_options = grouped(
    "robust",
    RobustOptions,
    click.option(
        "--robust",
        type=click.Choice(ROBUST),
        is_flag=False,
        flag_value="nominal",
        default=None,
        help="Robust references: partial-order schedules (the records carry their resource-flow edges) "
        "safe whatever the durations, demands fixed; nominal (--robust alone): the shortest at nominal "
        "durations; expected: the best found by mean makespan over sampled scenarios.",
    ),
    click.option(
        "--samples",
        type=COUNT,
        default=None,
        help=f"--robust: scenarios to choose on (expected) and to estimate the overflow left where demands "
        f"vary, each from the tasks' own varies or --noise.  [default: {SAMPLES}]",
    ),
    click.option(
        "--noise",
        type=Finite(0, 1, max_open=True),
        default=None,
        help="--robust: durations uniform within ±X of nominal in the scenarios (PeakBench's protocol), "
        "instead of the tasks' own varies.",
    ),
    click.option(
        "--noise-demand",
        type=Finite(0, 1, max_open=True),
        default=None,
        help="--robust: demands uniform within ±Y of nominal in the scenarios (--noise then defaults to 0).",
    ),
)


@click.command("solve")
@click.argument("paths", nargs=-1, required=True)
@read_options
@solving_options(per="per solve (workflow × machine)")
@executors_options
@seed_option("Random seed (the same references again with one worker per solve, the default).")
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="cpsat",
    show_default=True,
    help="cpsat (reference) or milp (time-indexed cross-check, small instances).",
)
@click.option(
    "--gap-limit",
    type=Finite(0, 1, max_open=True),
    default=0.0,
    show_default=True,
    help="Stop a solve once (makespan − bound) / makespan is at most this.",
)
@click.option(
    "-o",
    "--output",
    metavar="REFS.jsonl",
    help="Write the records to this JSON Lines file: streamed to REFS.jsonl.partial as they finish, "
    "which replaces REFS.jsonl in one step at the end (an interrupted run leaves REFS.jsonl as it was). "
    "A rerun continues: the records already in both files are kept, their pairs not solved again.",
)
@robust_options
@click.option("--json", "as_json", is_flag=True, help="Print the records on stdout (JSON Lines).")
@click.option(
    "--fresh",
    is_flag=True,
    help="Start over: drop the records of -o's file and its .partial instead of continuing from them.",
)
@click.option("--resume", is_flag=True, hidden=True, callback=_resume_is_default)  # the default now
@quiet_option
def solve_command(
    paths: tuple[str, ...],
    read: ReadOptions,
    solving: SolveOptions,
    executors: ExecutorOptions,
    seed: int,
    backend: str,
    gap_limit: float,
    output: str | None,
    robust: RobustOptions,
    as_json: bool,
    fresh: bool,
    resume: bool,
) -> None:
    """Optimal (or bounded) reference schedules for every workflow × machine of the inputs.

    Each record holds the status, makespan, proven lower bound, start times
    and cva floor; `peakopt score` reads them as references. With -o, records
    are appended to REFS.jsonl.partial as they finish, and that file replaces
    REFS.jsonl when the run ends: an interrupted run keeps its records there
    and leaves REFS.jsonl as it was. Rerun the same command to resume, as with
    `peakopt stress`: the pairs already in either file are not solved again
    (a record of another workflow or machine under the same names is), and
    --fresh starts over.

    Solves run in local processes (--jobs) or on a Dask cluster
    (--dask-local N starts one here, --scheduler joins a running one).

    Example: peakopt solve ../shared/psplib/j30/ --jobs 2 -o j30.refs.jsonl
    """
    from peakopt.campaign.jsonl import JsonLinesReferences
    from peakopt.campaign.solves import Sink, solve_items

    for flag, given in (("--resume", resume), ("--fresh", fresh)):
        if given and output is None:
            raise click.UsageError(f"{flag} needs -o/--output")
    if resume and fresh:
        raise click.UsageError("give --resume or --fresh, not both")
    out = claim(output, (*paths, *solving.machines))
    if resume and out is not None and out.special:
        raise click.UsageError(f"--resume needs a regular file, not {output}")
    place = executors.where()
    settings = {
        "time_limit": solving.time_limit,
        "workers": solving.workers,
        "seed": seed,
        "backend": backend,
        "gap_limit": gap_limit,
    }
    settings.update(_robust_settings(robust.robust, robust.samples, robust.noise, robust.noise_demand))
    pairs = [(workflow, m) for workflow, ms in targets(paths, solving.machines, read.as_dict()) for m in ms]
    refs = None if out is None else JsonLinesReferences(out, not fresh, warn)
    if refs is not None:
        same_kind(refs, robust.robust, output)
    everything = solve_items(pairs, settings)
    todo = [j for j in everything if refs is None or not solved(refs, j)]
    if refs is not None and len(refs):
        note(_resuming(refs, everything, todo, output))
    sink = Sink(refs, click.echo if as_json else None)
    began = time.monotonic()
    results = _run_all(todo, place, sink, refs, output, fresh)
    if refs is not None:
        refs.finish()
    print_tables(summary_table(results, time.monotonic() - began))
    if refs is not None:
        carried = f" ({len(results)} solved now)" if len(results) < len(refs) else ""
        wrote(output, plural(len(refs), "record") + carried)
    errors = [r for r in results if r.status == "error"]
    if errors:
        raise PeakoptError(
            f"{len(errors)} of {len(results)} solves failed, e.g. {errors[0].workflow}: {errors[0].message}"
        )


def solved(refs: JsonLinesReferences, job: SolveItem) -> bool:
    """Whether the run resumed from holds the job's record, for this very workflow and machine.

    A record names its pair by workflow id and machine name; the content hashes it carries
    tell another workflow or machine under those names, whose pair is solved again.
    """
    from peakopt.models import nominal_hash

    record = refs.get(job.workflow, job.machine)
    if record is None:
        return False
    return all(
        given is None or given == nominal_hash(model)
        for given, model in ((record.workflow_hash, job.workflow), (record.machine_hash, job.machine))
    )


def _robust_settings(
    robust: Robust | None, samples: int | None, noise: float | None, noise_demand: float | None
) -> dict[str, Any]:
    """The keyword arguments of :func:`peakopt.solver.robust.solve_robust` the options give."""
    given = [
        name
        for name, value in (("--samples", samples), ("--noise", noise), ("--noise-demand", noise_demand))
        if value is not None
    ]
    if robust is None:
        if given:
            raise click.UsageError(f"{given[0]} needs --robust")
        return {}
    found: dict[str, Any] = {"robust": robust, "samples": samples or SAMPLES}
    if noise is not None or noise_demand is not None:
        found["noise"] = [noise or 0.0, noise_demand or 0.0]  # Noise(duration, demand); JSON in records
    return found


def kind(robust: object) -> str:
    """What a run or a record of this ``robust`` mode holds, in words."""
    return "plain references" if robust is None else f"robust ({robust}) references"


def same_kind(refs: JsonLinesReferences, robust: Robust | None, output: str | None) -> None:
    """Refuse to continue a records file of another kind: a rerun would replace its records.

    Raises
    ------
    OutputError
        When a record carried over was solved with another ``--robust`` mode (or without).
    """
    for record in refs.known().values():
        if record.params.get("robust") != robust:
            refs.close()
            held = kind(record.params.get("robust"))
            raise OutputError(
                "-o",
                output or "",
                f"holds {held} (e.g. {record.workflow} × {record.machine}) and this run writes "
                f"{kind(robust)}; write them to another file, or give --fresh to replace it",
            )


def _resuming(
    refs: JsonLinesReferences, everything: list[SolveItem], todo: list[SolveItem], output: str | None
) -> str:
    again = sum(refs.has(j.workflow, j.machine) for j in todo)
    changed = f" ({again} solved again: their workflow or machine changed)" if again else ""
    held, left = plural(len(refs), "record"), plural(len(todo), "solve")
    return f"resuming: {held} already in {output}, {left} to go{changed}"


def _run_all(
    todo: list[SolveItem],
    place: Where,
    sink: Sink,
    refs: JsonLinesReferences | None,
    output: str | None,
    fresh: bool,
) -> list[SolveResult]:
    """Every job's record, on no more workers than jobs; an interrupt keeps what is written."""
    if not todo:
        return []
    try:
        with start(place, len(todo)) as executor:
            return solve_all(todo, executor, sink, console())
    except KeyboardInterrupt as exc:
        kept = ""
        if refs is not None:
            refs.close()
            kept = f" in {refs.kept}"
            if not refs.special:
                kept += f" ({output} is unchanged); {resume_hint(fresh)}"
        interrupted(exc, f"{sink.written} finished records kept{kept}")
