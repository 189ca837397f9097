"""Exact scoring of one schedule by a continuous-time event sweep (no time grid, no float rounding).

Every number is read as its shortest decimal and swept on integer grids
(:mod:`peakopt.oracle.judge.sweep`), so no rounding of the oracle's own enters a
verdict, and each figure is rounded once, to the nearest float, when reported.

Float noise in the given starts is absorbed by :data:`~peakopt.oracle.base.exact.TOLERANCE`
and by nothing else. A stretch of time shorter than ``TOLERANCE`` times the
schedule's time scale (its largest ``|time|``) lies between two instants that
are the same instant (:func:`~peakopt.oracle.base.exact.same_time`): it is *noise*,
and the steps running in it count as if they ran one after another — each
one's own overload (which no schedule avoids) counts, their sum does not; it
sets no peak and starts or ends no overflow interval. A dependency holds when
the successor starts at or after the same instant as its predecessor's end.
Loads are exact: a load counts as over capacity only when it exceeds what the
running steps force on their own by more than ``TOLERANCE`` of the capacity.
So a step that starts at 0.7 + 0.1 = 0.7999999999999999 after one ending at
0.8 overlaps nothing, while an overload of any measurable length counts
however long the schedule: ``safe`` means an avoidable cva of exactly 0,
``strict_mru`` needs a cva of exactly 0, and the same data in seconds or in
microseconds get the same verdict.
"""

from __future__ import annotations

from peakopt.models import Machine, Schedule, SolveResult, Workflow
from peakopt.oracle.base.exact import to_float
from peakopt.oracle.judge import metrics
from peakopt.oracle.judge.metrics import Measured, Usage, measure
from peakopt.oracle.judge.slowdown import slowed_makespan
from peakopt.oracle.judge.sweep import OverflowSpan
from peakopt.oracle.judge.verdict import ResourceScore, Score, Violation


def _time(x: float) -> str:
    # 12 significant digits, the tolerance's: noise never shows (0.30000000000000004 -> 0.3)
    return repr(float(f"{x:.12g}") + 0.0)


def _amount(x: float) -> str:
    return f"{x:g}"


def _start_violations(workflow: Workflow, schedule: Schedule, measured: Measured) -> list[Violation]:
    """Missing, negative and unknown starts, then broken dependencies, in words."""
    starts, grid, index = schedule.starts, measured.grid, workflow.index
    found = []
    for kind, task in measured.unfit:
        if kind == "missing":
            message = f"task {task!r} has no start"
        elif kind == "negative_start":
            message = f"task {task!r} starts at {_time(starts[task])}, before 0"
        else:
            message = f"start given for unknown task {task!r}"
        found.append(Violation(kind=kind, message=message, tasks=(task,)))
    for pred, succ in measured.broken:
        end = to_float(grid.starts[pred] + grid.bounds[index[pred]][-1], grid.exponent)
        found.append(
            Violation(
                kind="dependency",
                message=f"{pred} -> {succ}: {succ} starts at {_time(starts[succ])} "
                f"before {pred} ends at {_time(end)}",
                tasks=(pred, succ),
            )
        )
    return found


def _overflow(resource: str, usage: Usage, found: OverflowSpan, measured: Measured) -> Violation:
    start, end = measured.seconds(found.start), measured.seconds(found.end)
    load = to_float(found.load, usage.demands.exponent)
    return Violation(
        kind="overflow",
        message=f"{resource} {_amount(load)}/{_amount(usage.capacity)} over [{_time(start)}, {_time(end)})",
        tasks=tuple(sorted(found.tasks)),
        resource=resource,
        start=start,
        end=end,
        load=load,
        capacity=usage.capacity,
        avoidable=found.avoidable > 0,
    )


def _resource(resource: str, usage: Usage, measured: Measured) -> ResourceScore:
    cap, swept = usage.demands.capacity, usage.swept
    return ResourceScore(
        capacity=usage.capacity,
        peak=to_float(swept.peak, usage.demands.exponent),
        peak_ratio=to_float(swept.peak, 0, cap),
        violation_area=to_float(swept.area, measured.grid.exponent, cap),
        floor_area=to_float(usage.floor, measured.grid.exponent, cap),
        kind=metrics.hardness_of(measured, resource),
    )


def evaluate(
    workflow: Workflow, machine: Machine, schedule: Schedule, *, soft_as_hard: bool = False
) -> Score:
    """Score ``schedule`` of ``workflow`` on ``machine`` exactly.

    Parameters
    ----------
    workflow, machine
        The instance; resources the machine does not list are unconstrained
        and do not enter cva or MRU. Overflowing a resource the machine declares
        ``soft`` leaves the schedule safe and slows it down (``slowed_makespan``).
    schedule
        Start times; missing, unknown or negative starts and broken
        dependencies make it invalid, and are listed among the violations.
    soft_as_hard
        Count the machine's soft resources as hard (``--soft-as-hard``): any
        avoidable overflow is unsafe, as on a machine without ``soft``.

    Returns
    -------
    Score
        Every metric of the design's table (:mod:`peakopt.oracle.judge.metrics`),
        per-resource figures and the violations (overflow intervals
        included). ``mru`` (and the MRUs built on it) is None when undefined:
        a span of 0, or no resource.
    """
    measured = measure(workflow, machine, schedule.starts, soft_as_hard=soft_as_hard)
    safe = metrics.safe(measured)
    violations = _start_violations(workflow, schedule, measured)
    violations.extend(
        _overflow(resource, usage, found, measured)
        for resource, usage in measured.usage.items()
        for found in usage.swept.overflows
    )
    return Score(
        workflow=workflow.id,
        machine=machine.name,
        source=schedule.source,
        valid=metrics.valid(measured),
        makespan=metrics.makespan(measured),
        cva=metrics.cva(measured),
        cva_floor=metrics.cva_floor(measured),
        avoidable_cva=metrics.avoidable_cva(measured),
        avoidable_cva_hard=metrics.avoidable_cva_hard(measured),
        avoidable_cva_soft=metrics.avoidable_cva_soft(measured),
        safe=safe,
        mru=metrics.mru(measured),
        strict_mru=metrics.strict_mru(measured),
        safe_mru=metrics.safe_mru(measured),
        dependency_violations=metrics.dependency_violations(measured),
        resources={r: _resource(r, usage, measured) for r, usage in measured.usage.items()},
        violations=tuple(violations),
        # defined for every valid schedule (an unsafe one's too: hard overflow changes no rate),
        # though only a safe one's gap and efficiency are figured from it
        slowed_makespan=slowed_makespan(workflow, measured) if metrics.valid(measured) else None,
    )


def with_reference(score: Score, reference: SolveResult | None) -> Score:
    """``score`` with its gap figures filled from ``reference``, when it is safe.

    The gaps are figured from the score's slowed makespan, never below the optimum
    (:func:`~peakopt.oracle.judge.metrics.charged_makespan`). Only a safe schedule has a
    gap: the optimum is the best safe schedule, so
    an unsafe one may well finish earlier — its speed came from overflowing a
    capacity, and a negative gap would reward that. Nor does an invalid one
    (missing steps, broken dependencies...) get one: its makespan is not that
    of a schedule of the workflow. Their gap figures stay None, and tables,
    plot titles and reports show ``unsafe`` or ``invalid`` instead.

    Raises
    ------
    ValueError
        When the reference is for another workflow or machine.
    """
    if reference is None or not score.safe:
        return score
    if (reference.workflow, reference.machine) != (score.workflow, score.machine):
        raise ValueError(
            f"reference is for {reference.workflow!r} on {reference.machine!r}, "
            f"the score for {score.workflow!r} on {score.machine!r}"
        )
    soft_overflow = score.avoidable_cva_soft > 0
    charged = metrics.charged_makespan(score.makespan, score.slowed_makespan, reference, soft_overflow)
    gap, gap_vs_lb, gap_vs_ub = metrics.gaps(charged, reference)
    return score.model_copy(update={"gap": gap, "gap_vs_lb": gap_vs_lb, "gap_vs_ub": gap_vs_ub})
