"""``peakopt profile``: measure a real command's runs and write them as a task, or into a workflow's step."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from peakopt.campaign.ranges import COUNT, PROBABILITY, SECONDS
from peakopt.cli.messages import note, plural, quiet_option, wrote
from peakopt.cli.outputs import REPLACES, claim
from peakopt.models.extras import require
from peakopt.runtime.measurement import ACCOUNTINGS, INTERVAL
from peakopt.runtime.segments import MAX_SEGMENTS, MERGE_TOLERANCE

if TYPE_CHECKING:
    from peakopt.models import Task


def summary(task: Task) -> str:
    """One line on what was measured: runs, accounting, duration, CPU and memory."""
    meta = task.meta["profile"]
    peak_mb = max(s.demand.get("memory_mb", 0.0) for s in task.segments)
    return (
        f"{task.id}: {task.length:.3f} s, cpu {meta['cpu_avg']:g} avg / {meta['cpu_peak']:g} peak cores, "
        f"memory peak {peak_mb:g} MiB, {plural(len(task.segments), 'segment')} "
        f"({plural(meta['runs'], 'run')}, {meta['accounting']}, sampled every {meta['interval']:g} s)"
    )


@click.command(context_settings={"allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True, metavar="-- CMD [ARGS]...")
@click.option("--runs", type=COUNT, default=1, show_default=True, help="How many times to run it.")
@click.option("--id", "task_id", metavar="ID", help="The task's id (default: the program's name).")
@click.option(
    "--interval", type=SECONDS, default=INTERVAL, show_default=True, help="Sampling interval in seconds."
)
@click.option(
    "--accounting",
    type=click.Choice(ACCOUNTINGS),
    default="auto",
    show_default=True,
    help="cgroup (a cgroup of its own: v2, exact memory.peak and cpu.stat, or else v1, exact "
    "memory.max_usage_in_bytes and cpuacct.usage), psutil (sampling the process tree), or auto: "
    "cgroup where available, else psutil.",
)
@click.option(
    "--tolerance",
    type=PROBABILITY,
    default=MERGE_TOLERANCE,
    show_default=True,
    help="A new segment starts where usage changes by more than this share of its peak.",
)
@click.option(
    "--max-segments", type=COUNT, default=MAX_SEGMENTS, show_default=True, help="At most this many."
)
@click.option("-o", "--output", metavar="FILE", help=f"Write the task (JSON). {REPLACES}")
@click.option("--workflow", "workflow_file", metavar="FILE", help="Fill step --step of this workflow file.")
@click.option("--step", metavar="ID", help="The step of --workflow to fill.")
@click.option(
    "--store",
    metavar="FILE",
    help="Add the runs to this profile store (JSON, created when missing) under the task's id, where "
    "the governor looks up a tool's demand (the p90 of its last runs).",
)
@quiet_option
def profile(
    command: tuple[str, ...],
    runs: int,
    task_id: str | None,
    interval: float,
    accounting: str,
    tolerance: float,
    max_segments: int,
    output: str | None,
    workflow_file: str | None,
    step: str | None,
    store: str | None,
) -> None:
    """Measure a real command's run: its duration, CPU and memory over time, as a task.

    Runs CMD (no shell: give sh -c '...' for a pipeline) --runs times and
    measures its whole process tree: wall time, CPU cores and resident memory
    over time. The task's profile is the median run's, merged into a few
    segments (cpu in cores: the segment's mean; memory_mb in MiB: its peak);
    with several runs, varies holds the spread (p10/p50/p90). meta says how it
    was measured. Without -o, --workflow or --store the task goes to stdout; CMD's
    own output goes to stderr, so it never mixes with the task. With
    --workflow FILE --step ID the step is filled in place: only the step's
    text changes, the rest of the file keeps its layout (the file is replaced
    in one step; an interrupted run leaves it as it was).

    Example: peakopt profile --runs 3 --id fraud_score -- python fraud.py
    """
    require("psutil", "peakopt profile")  # the runtime extra: one line now, not a traceback later
    # the profiler, the readers and the models: here, so that `profile --help` imports no pydantic
    from peakopt.instances.native import pretty_json
    from peakopt.runtime.fill import filled, find_step, read_document
    from peakopt.runtime.profile import profile_command
    from peakopt.runtime.profiles import ProfileStore

    if (workflow_file is None) != (step is None):
        raise click.UsageError("--workflow and --step go together: --workflow FILE --step ID")
    if workflow_file is not None and (output is not None or task_id is not None):
        raise click.UsageError("--workflow fills the step in place; it takes neither -o nor --id")
    target = claim(workflow_file or output, option="--workflow" if workflow_file else "-o")
    document = None
    if workflow_file is not None and step is not None:
        document = read_document(workflow_file)
        find_step(document, step, workflow_file)  # a wrong step fails before the runs
    store_out = claim(store, option="--store")
    profiles = ProfileStore(store) if store is not None else None  # a bad store fails before the runs
    note(f"profiling {shlex.join(command)} ({plural(runs, 'run')})")
    task = profile_command(
        command,
        runs=runs,
        task_id=step or task_id,
        interval=interval,
        accounting=accounting,  # type: ignore[arg-type]
        tolerance=tolerance,
        max_segments=max_segments,
    )
    note(summary(task))
    if profiles is not None and store_out is not None:
        profiles.add_task(task)
        store_out.write_text(profiles.to_json())
        wrote(store, f"tool {task.id!r}: {plural(len(profiles.samples(task.id)), 'sample')}")
        if target is None:
            return
    if document is not None and workflow_file is not None and step is not None and target is not None:
        target.write_text(filled(document, step, task, workflow_file))
        wrote(workflow_file, f"step {step!r} filled")
        return
    text = pretty_json(task.model_dump(mode="json", exclude_none=True, exclude_defaults=True))
    if target is None:
        click.echo(text, nl=False)
        return
    target.write_text(text)
    wrote(output, f"task {task.id!r}")
