"""``score``'s run records: controller traces and OpenTelemetry exports, scored as they ran."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from peakopt.cli.common import input_files, warn
from peakopt.cli.messages import note, plural
from peakopt.cli.options import grouped
from peakopt.cli.targets import agreed
from peakopt.instances import BUNDLED_PREFIX
from peakopt.runtime.names import DEMAND_KINDS, DemandKind

# the readers, the models and the hindsight scoring are imported by the functions that use them,
# so that score --help (which declares these options) imports no pydantic
if TYPE_CHECKING:
    from peakopt.models import Machine, Suite
    from peakopt.oracle.tables.rows import ScoreRow
    from peakopt.runtime.hindsight import RunFormat

F = TypeVar("F", bound=Callable[..., Any])


def run_options(func: F) -> F:
    """``--demand``, ``--machine`` and ``--trace-id``: how run records are scored."""
    func = click.option(
        "--trace-id",
        metavar="ID",
        help="OpenTelemetry exports: the trace to score, when an export holds several.",
    )(func)
    func = click.option(
        "--machine",
        "machine_ref",
        metavar="NAME|FILE",
        help="OpenTelemetry exports: the machine to score them on (a machine of the inputs, a "
        "machine file or bundled:NAME); needed when an export names none.",
    )(func)
    return click.option(
        "--demand",
        type=click.Choice(DEMAND_KINDS),
        default="declared",
        show_default=True,
        help="Traces: score each step with its declared demands, or with what it was measured to "
        "use (peak memory, average cores; a run with --measure).",
    )(func)


@dataclass(frozen=True)
class RunInputs:
    """The run records among the inputs: (path, kind) each, and the other inputs."""

    records: tuple[tuple[str, RunFormat], ...]
    others: tuple[str, ...]

    @classmethod
    def split(cls, paths: Sequence[str]) -> RunInputs:
        """Tell run records from suites by their content (directories expanded)."""
        from peakopt.runtime.hindsight import run_format

        records, others = [], []
        for path in input_files(paths):
            kind = run_format(path)
            if kind is None:
                others.append(path)
            else:
                records.append((path, kind))
        return cls(tuple(records), tuple(others))

    def check(self, machine_ref: str | None, trace_id: str | None) -> None:
        """Usage errors for ``--machine`` or ``--trace-id`` given with no OpenTelemetry export."""
        if any(kind == "otlp" for _, kind in self.records):
            return
        for option, value in (("--machine", machine_ref), ("--trace-id", trace_id)):
            if value is not None:
                raise click.UsageError(
                    f"{option} is for OpenTelemetry exports, and no input is one "
                    "(a peakopt trace is scored on its own machine)"
                )


def machine_for(ref: str | None, suites: Sequence[Suite]) -> Machine | None:
    """The one machine ``--machine`` names: a machine of the inputs, else the only one of a file."""
    if ref is None:
        return None
    known, ambiguous = agreed(suites)
    if ref in known:
        return known[ref]
    if ref in ambiguous:
        raise click.BadParameter(
            f"machine {ref!r} has different capacities in different inputs", param_hint="'--machine'"
        )
    if not (ref.startswith(BUNDLED_PREFIX) or (os.path.lexists(ref) and not Path(ref).is_dir())):
        names = ", ".join(sorted(known)) or "none"
        raise click.BadParameter(
            f"{ref!r} is neither a machine of the inputs (they define: {names}) nor a file",
            param_hint="'--machine'",
        )
    from peakopt.instances.machine_files import load_machines

    found = load_machines(ref)
    if len(found) != 1:
        names = ", ".join(m.name for m in found)
        raise click.BadParameter(
            f"{ref!r} holds {len(found)} machines ({names}): give the file as an input and "
            "--machine the name of one",
            param_hint="'--machine'",
        )
    return found[0]


@dataclass(frozen=True)
class TraceOptions:
    """The values of :func:`run_options`: how run records (traces) are scored."""

    demand: str
    machine_ref: str | None
    trace_id: str | None


#: :func:`run_options`, reaching the command as ``traces``, one :class:`TraceOptions`.
traces_group = grouped("traces", TraceOptions, run_options)


def score_runs(
    runs: RunInputs,
    *,
    demand: str,
    machine: Machine | None,
    trace_id: str | None,
    time_limit: float,
    seed: int,
    soft_as_hard: bool = False,
) -> list[ScoreRow]:
    """The row of each run record: its actual starts and durations, and the hindsight gap."""
    from peakopt.runtime.hindsight import read_run, score_trace, why_no_efficiency

    rows = []
    for path, kind in runs.records:
        trace = read_run(path, kind, machine=machine, trace_id=trace_id)
        if soft_as_hard:
            trace = trace.model_copy(update={"machine": trace.machine.as_hard()})
        # click.Choice has checked the value against the Literal's members
        row, best = score_trace(
            trace, path, demand=cast(DemandKind, demand), time_limit=time_limit, seed=seed
        )
        why = why_no_efficiency(row, best)
        if why is not None:
            warn(f"{path}: no efficiency: {why}")
        rows.append(row)
    if rows:
        note(
            f"{plural(len(rows), 'run')} scored as they ran: actual starts and durations, {demand} demands; "
            "gap and efficiency against the optimum for those durations (hindsight)"
        )
    return rows
