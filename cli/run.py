"""``peakopt run``: run a workflow of shell commands under the admission controller, and judge its trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from peakopt.campaign.ranges import SECONDS, Finite
from peakopt.cli.common import ReadOptions, read_options, warn
from peakopt.cli.group import run_interruptible
from peakopt.cli.messages import note, plural, quiet_option, wrote
from peakopt.cli.options import grouped, seconds_option, seed_option
from peakopt.cli.outputs import REPLACES, Output, claim
from peakopt.cli.targets import choose, targets
from peakopt.models import PeakoptError
from peakopt.models.extras import require
from peakopt.runtime.limits import LIMIT_ENV
from peakopt.runtime.names import COMMAND_KEY, ON_FAILURE, REPLAN_GRACE, REPLAN_LIMIT, THRESHOLD

if TYPE_CHECKING:
    from peakopt.runtime.steps import Step
    from peakopt.runtime.trace import Trace


def given_commands(values: tuple[str, ...]) -> dict[str, Step]:
    """``--command ID=CMD`` values as id -> shell line."""
    found: dict[str, Step] = {}
    for value in values:
        step, sep, line = value.partition("=")
        if not sep or not step or not line.strip():
            raise click.BadParameter(f"{value!r} is not ID=COMMAND", param_hint="'--command'")
        found[step] = line
    return found


def write_spans(trace: Trace, target: str, out: Output | None) -> None:
    """``--otlp-out``: the trace's spans to a collector, or replacing the file ``out`` in one step."""
    from peakopt.runtime.telemetry import export_trace

    if out is None:
        count = export_trace(trace, target)
        note(f"sent {plural(count, 'span')} to {target}")
        return
    with out.replacing() as temp:
        count = export_trace(trace, temp)
    wrote(target, plural(count, "span"))


@dataclass(frozen=True)
class MeasureOptions:
    """``--measure``, ``--interval``, ``--cgroup-memory``, ``--limit-memory``: what is measured and held."""

    measure: bool
    interval: float
    cgroup_memory: bool
    limit_memory: bool


@dataclass(frozen=True)
class PlanningOptions:
    """``--time-limit``, ``--replan``, ``--replan-limit``, ``--replan-threshold``, ``--seed``: the plans."""

    time_limit: float
    replan: bool
    replan_limit: float
    replan_threshold: float
    seed: int


@dataclass(frozen=True)
class TraceOutputs:
    """``-o``, ``--json`` and ``--otlp-out``: where the trace goes."""

    output: str | None
    as_json: bool
    otlp_out: str | None


#: ``--measure`` ... ``--limit-memory``, reaching the command as ``measuring``, one :class:`MeasureOptions`.
measure_options = grouped(
    "measuring",
    MeasureOptions,
    click.option("--measure", is_flag=True, help="Sample each step's process tree and record its usage."),
    click.option(
        "--interval", type=SECONDS, default=0.1, show_default=True, help="Sampling interval of --measure (s)."
    ),
    click.option(
        "--cgroup-memory",
        is_flag=True,
        help="Lower the machine's memory_mb capacity to this process's cgroup memory limit (v2 memory.max, "
        "v1 memory.limit_in_bytes, the ancestors' included) where that is lower.",
    ),
    click.option(
        "--limit-memory",
        is_flag=True,
        help="Kill a step that uses more memory than it declares: each command step with a memory_mb runs "
        "in a cgroup of its own limited to it (v2 memory.max, v1 memory.limit_in_bytes), or under RLIMIT_AS "
        f"where cgroups cannot be used (or {LIMIT_ENV}=rlimit).",
    ),
)

#: ``--time-limit`` ... ``--seed``, reaching the command as ``planning``, one :class:`PlanningOptions`.
planning_options = grouped(
    "planning",
    PlanningOptions,
    seconds_option("--time-limit", 10.0, "Solver time limit of the robust and optimal policies (s)."),
    click.option(
        "--replan",
        is_flag=True,
        help="When a step runs longer than declared (past --replan-threshold), re-plan the rest around "
        "what has run and go on in the new plan's order.",
    ),
    seconds_option("--replan-limit", REPLAN_LIMIT, "Solver time limit of each re-plan (s)."),
    click.option(
        "--replan-threshold",
        type=Finite(0, 1e6),
        default=THRESHOLD,
        show_default=True,
        help=f"Re-plan once a step has run (1 + this) × its planned duration, plus {REPLAN_GRACE:g} s.",
    ),
    seed_option("Seed of the policy (seeded methods, the solver)."),
)

#: ``-o``, ``--json`` and ``--otlp-out``, reaching the command as ``writing``, one :class:`TraceOutputs`.
trace_outputs = grouped(
    "writing",
    TraceOutputs,
    click.option("-o", "--output", metavar="FILE", help=f"Write the trace (JSON). {REPLACES}"),
    click.option("--json", "as_json", is_flag=True, help="Print the trace on stdout."),
    click.option(
        "--otlp-out",
        metavar="FILE|URL",
        help="Also write the trace as OpenTelemetry spans (one per step; peakopt score reads them): to an "
        f"OTLP JSON file, or to an OTLP/HTTP collector (http://host:4318). Needs the otel extra. {REPLACES}",
    ),
)


@click.command("run")
@click.argument("paths", nargs=-1, required=True, metavar="WORKFLOW...")
@click.option(
    "--machine", "machine_refs", multiple=True, metavar="NAME|FILE", help="The machine to run under."
)
@click.option(
    "--workflow", "workflow_id", metavar="ID", help="The workflow to run, when the inputs hold several."
)
@click.option(
    "--policy",
    metavar="NAME|module:function",
    default="admission",
    show_default=True,
    help="Which ready steps start: robust, optimal (the order of that reference), or a method's online "
    "form (admission, asap, sgs:parallel:lft, a plug-in...).",
)
@click.option(
    "--command",
    "given",
    multiple=True,
    metavar="ID=CMD",
    help=f"The shell command of step ID (instead of its meta.{COMMAND_KEY}); repeat for several.",
)
@click.option(
    "--on-failure",
    type=click.Choice(ON_FAILURE),
    default="continue",
    show_default=True,
    help="When a step fails: continue (skip what depends on it) or stop (start nothing more).",
)
@click.option(
    "--no-guard", is_flag=True, help="Trust the policy: start what it picks even when it does not fit."
)
@measure_options
@planning_options
@trace_outputs
@read_options
@quiet_option
def run_command(
    paths: tuple[str, ...],
    machine_refs: tuple[str, ...],
    workflow_id: str | None,
    policy: str,
    given: tuple[str, ...],
    on_failure: str,
    no_guard: bool,
    measuring: MeasureOptions,
    planning: PlanningOptions,
    writing: TraceOutputs,
    read: ReadOptions,
) -> None:
    """Run a workflow's shell commands on this machine under a machine's capacities.

    At the start and whenever a step ends, the policy picks ready steps and the
    controller starts those whose declared peak demand fits the free capacity
    (a step over a capacity on its own runs alone). Each step runs its
    meta.command (a shell line or a list of arguments) or its --command. When a
    step fails, what depends on it is skipped (--on-failure stop: nothing more
    starts) and the command exits 1 after writing the trace; so it does when
    the policy fails (raises, answers wrongly, stalls), the fault in the trace.
    Ctrl-C ends every running step's processes; a reaper process ends them
    if the command dies otherwise (kill -9). Progress and the oracle's verdict on the trace
    go to stderr. With --replan, a step that overruns makes the controller
    re-plan the rest (the started steps fixed, the others from now) within
    --replan-limit; the trace records each re-plan. With --measure, a step
    measured above its declaration is warned at once and the verdict judges
    the measured use; --limit-memory kills such a step at its declared memory.

    Example: peakopt run refund_commands.json --machine worker --policy robust -o trace.json
    """
    require("psutil", "peakopt run")  # the runtime extra: one line now, not a traceback later
    # the controller, the trace model and the policies: here, so that `run --help` imports no pydantic
    from peakopt.runtime.cgroups import memory_limit, within_limit
    from peakopt.runtime.controller import Controller, commands
    from peakopt.runtime.policies import named_policy
    from peakopt.runtime.replan import Replan
    from peakopt.runtime.telemetry import is_url, require_sdk
    from peakopt.runtime.trace import trace_json
    from peakopt.runtime.verdict import verdict_line
    from peakopt.solver.heuristics import MethodError

    output, otlp_out, seed = writing.output, writing.otlp_out, planning.seed
    out = claim(output, paths)
    spans_out = None if otlp_out is None or is_url(otlp_out) else claim(otlp_out, paths, option="--otlp-out")
    if otlp_out is not None:
        require_sdk()
    workflow, machine = choose(targets(paths, machine_refs, read.as_dict()), workflow_id)
    if measuring.cgroup_memory:
        machine, how = within_limit(machine, memory_limit())
        note(how)
    steps = given_commands(given)
    unknown = sorted(set(steps) - workflow.index.keys())
    if unknown:
        raise click.BadParameter(
            f"workflow {workflow.id!r} has no step {unknown[0]!r}", param_hint="'--command'"
        )
    steps = commands(workflow, steps)  # a step without a command fails before any solve
    try:
        chosen = named_policy(policy, workflow, machine, seed=seed, time_limit=planning.time_limit)
    except MethodError as exc:
        raise click.BadParameter(f"{exc}; or robust, optimal", param_hint="'--policy'") from None
    controller = Controller(
        workflow,
        machine,
        chosen,
        steps,
        name=policy,
        guard=not no_guard,
        on_failure=on_failure,  # type: ignore[arg-type]
        measure=measuring.measure,
        interval=measuring.interval,
        progress=note,
        warn=warn,
        limit_memory="auto" if measuring.limit_memory else None,
        replan=Replan(planning.replan_threshold, planning.replan_limit, seed) if planning.replan else None,
    )
    trace = run_interruptible(controller.run())
    text = trace_json(trace)
    if out is not None:
        out.write_text(text)
        wrote(output, f"trace of {plural(len(trace.steps), 'step')}")
    if writing.as_json:
        click.echo(text, nl=False)
    note(verdict_line(trace))
    if otlp_out is not None:
        write_spans(trace, otlp_out, spans_out)
    if trace.replans:
        slowest = max(r.seconds for r in trace.replans)
        note(f"{plural(len(trace.replans), 're-plan')}, the slowest in {slowest * 1000:.0f} ms")
    failed = [r for r in trace.steps if r.status == "failed"]
    if trace.error is not None:
        skipped = sum(r.status == "skipped" for r in trace.steps)
        raise PeakoptError(trace.error + (f"; {plural(skipped, 'step')} skipped" if skipped else ""))
    if failed:
        skipped = sum(r.status == "skipped" for r in trace.steps)
        first = failed[0]
        raise PeakoptError(
            f"step {first.id!r} failed ({(first.error or str(first.exit_code)).splitlines()[-1]})"
            + (f" and {len(failed) - 1} more" if len(failed) > 1 else "")
            + (f"; {plural(skipped, 'step')} skipped" if skipped else "")
        )
