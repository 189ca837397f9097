"""``peakopt solve``: reference schedules for every workflow × machine, in parallel, resumable."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from peakopt.campaign.executors import Executor, Where, report, run_items, solve_deadline
from peakopt.cli.cluster import executor_options, solve_options, start, where
from peakopt.cli.common import input_options, interrupted, warn
from peakopt.cli.options import Finite, seed_option
from peakopt.cli.outputs import claim
from peakopt.cli.stream import Stream
from peakopt.cli.targets import targets
from peakopt.models import Machine, PeakoptError, SolveResult, Workflow
from peakopt.solver import BACKENDS, solve

#: A solve running longer than this shows its incumbent and bound (seconds).
LONG_SOLVE = 2.0


@dataclass(frozen=True)
class Job:
    """One workflow × machine to solve, and its place in the run."""

    index: int
    workflow: Workflow
    machine: Machine
    settings: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the record in the output (for --resume)."""
        return self.workflow.id, self.machine.name


def run_job(job: Job) -> SolveResult:
    """Solve one job in a worker; solver refusals become ``error`` records."""

    def progress(incumbent: float | None, bound: float) -> None:
        report((job.index, incumbent, bound))

    try:
        return solve(job.workflow, job.machine, progress=progress, **job.settings)
    except PeakoptError as exc:
        return failed(job, str(exc))


def failed(job: Job, message: str) -> SolveResult:
    """The ``error`` record of a job."""
    return SolveResult(
        workflow=job.workflow.id,
        machine=job.machine.name,
        status="error",
        solver=job.settings["backend"],
        params=job.settings,
        message=message,
    )


def deadline(job: Job) -> float:
    """Hard limit of one solve (seconds)."""
    return solve_deadline(float(job.settings["time_limit"]))


def plan(
    paths: tuple[str, ...], refs: tuple[str, ...], settings: dict[str, Any], read: dict[str, Any]
) -> list[Job]:
    """Every workflow × machine of the inputs, each file with its own machines unless --machine says."""
    pairs = [(workflow, m) for workflow, machines in targets(paths, refs, read) for m in machines]
    return [Job(index, workflow, machine, settings) for index, (workflow, machine) in enumerate(pairs)]


class Sink:
    """Where records go as they finish: the output's side file (:mod:`peakopt.cli.stream`), stdout."""

    def __init__(self, stream: Stream | None, as_json: bool) -> None:
        self.stream = stream
        self.as_json = as_json
        self.written = 0

    def write(self, result: SolveResult) -> None:
        """One JSON line per record; flushed so that an interrupted run keeps it."""
        line = json.dumps(result.model_dump(mode="json"))
        if self.stream is not None:
            self.stream.write(line)
        if self.as_json:
            click.echo(line)
        self.written += 1


def _progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]solve"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=False,
    )


def _describe(job: Job, incumbent: float | None, bound: float) -> str:
    best = "none yet" if incumbent is None else f"{incumbent:g}"
    return f"{job.workflow.id} × {job.machine.name}: makespan {best}, bound {bound:g}"


def run(jobs: list[Job], executor: Executor, sink: Sink, console: Console) -> Iterator[SolveResult]:
    """Solve the jobs on the executor; yield each record as it finishes (after writing it)."""
    seen: dict[int, float] = {}
    running = {job.index: job for job in jobs}
    with _progress_bar(console) as bar:
        task = bar.add_task("", total=len(jobs))

        def tick() -> None:
            _show_long(executor.messages(), running, seen, bar, task)

        for outcome in run_items(executor, run_job, jobs, deadline=deadline, tick=tick):
            job = outcome.item
            result = outcome.value if outcome.value is not None else failed(job, outcome.error or "")
            sink.write(result)
            bar.advance(task)
            del running[job.index]
            yield result


def _show_long(
    messages: list[tuple[int, float | None, float]],
    running: dict[int, Job],
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
    table = Table(title=f"{len(results)} solves in {seconds:.1f} s")
    for column in ("status", "count", "mean gap", "mean seconds", "max seconds"):
        table.add_column(column, justify="left" if column == "status" else "right")
    for status in sorted({r.status for r in results}):
        rows = [r for r in results if r.status == status]
        gaps = [gap(r) for r in rows if gap(r) is not None]
        mean_gap = f"{sum(g for g in gaps if g is not None) / len(gaps):.2%}" if gaps else "-"
        times = [r.seconds for r in rows]
        table.add_row(status, str(len(rows)), mean_gap, f"{sum(times) / len(times):.3f}", f"{max(times):.3f}")
    return table


def gap(result: SolveResult) -> float | None:
    """(makespan − lower bound) / makespan, when both are known."""
    if result.makespan is None or result.lower_bound is None:
        return None
    return (result.makespan - result.lower_bound) / result.makespan if result.makespan > 0 else 0.0


@click.command("solve")
@click.argument("paths", nargs=-1, required=True)
@input_options
@solve_options(time_limit=60.0, workers=2, per="per solve (workflow × machine)")
@executor_options(jobs_default="1")
@seed_option("Random seed (reproducible with --workers 1).")
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
    "which replaces REFS.jsonl in one step at the end (an interrupted run leaves REFS.jsonl as it was).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON record per solve on stdout.")
@click.option(
    "--resume",
    is_flag=True,
    help="Continue from -o's file and its .partial: their records are kept, their pairs not solved again.",
)
def solve_command(
    paths: tuple[str, ...],
    fmt: str | None,
    cpu: str,
    keep_dummies: bool,
    machines: tuple[str, ...],
    time_limit: float,
    workers: int,
    jobs: int | None,
    dask_local: int | None,
    scheduler: str | None,
    seed: int,
    backend: str,
    gap_limit: float,
    output: str | None,
    as_json: bool,
    resume: bool,
) -> None:
    """Optimal (or bounded) reference schedules for every workflow × machine of the inputs.

    Each record holds the status, makespan, proven lower bound, start times
    and cva floor; `peakopt score` reads them as references. With -o, records
    are appended to REFS.jsonl.partial as they finish, and that file replaces
    REFS.jsonl when the run ends: an interrupted run keeps its records there
    and leaves REFS.jsonl as it was; --resume continues from both.

    Solves run in local processes (--jobs) or on a Dask cluster
    (--dask-local N starts one here, --scheduler joins a running one).

    Example: peakopt solve ../shared/psplib/j30/*.sm --jobs 2 --workers 1 -o j30.refs.jsonl
    """
    if output is not None and as_json:
        raise click.UsageError("give -o/--output or --json, not both")
    if resume and output is None:
        raise click.UsageError("--resume needs -o/--output")
    out = claim(output, (*paths, *machines))
    if resume and out is not None and out.special:
        raise click.UsageError(f"--resume needs a regular file, not {output}")
    place = where(jobs or (None if dask_local or scheduler else 1), dask_local, scheduler)
    settings = {
        "time_limit": time_limit,
        "workers": workers,
        "seed": seed,
        "backend": backend,
        "gap_limit": gap_limit,
    }
    read = {"format": fmt, "cpu": cpu, "keep_dummies": keep_dummies}
    todo = plan(paths, machines, settings, read)
    stream = None if out is None else Stream(out, resume)
    done = set() if stream is None else stream.done
    todo = [j for j in todo if j.key not in done]
    if done:
        warn(f"resuming: {len(done)} records already in {output}, {len(todo)} solves to go")
    sink = Sink(stream, as_json)
    began = time.monotonic()
    results = _run_all(todo, place, sink, output)
    if stream is not None:
        stream.finish()
    Console(stderr=True).print(summary_table(results, time.monotonic() - began))
    errors = [r for r in results if r.status == "error"]
    if errors:
        raise PeakoptError(
            f"{len(errors)} of {len(results)} solves failed, e.g. {errors[0].workflow}: {errors[0].message}"
        )


def _run_all(todo: list[Job], place: Where, sink: Sink, output: str | None) -> list[SolveResult]:
    """Every job's record, on no more workers than jobs; an interrupt keeps what is written."""
    results: list[SolveResult] = []
    if not todo:
        return results
    try:
        with start(place, len(todo)) as executor:
            results.extend(run(todo, executor, sink, Console(stderr=True)))
    except KeyboardInterrupt as exc:
        kept = ""
        if sink.stream is not None:
            sink.stream.close()
            kept = f" in {sink.stream.kept}"
            if not sink.stream.special:
                kept += f" ({output} is unchanged); run the same command with --resume to finish"
        interrupted(exc, f"{sink.written} finished records kept{kept}")
    return results
