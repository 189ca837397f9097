"""The robust reference: the shortest partial-order schedule that is safe whatever the durations.

A partial-order schedule (POS: the dependencies plus resource-flow edges, run as soon as they
allow) keeps every capacity under every realisation of the durations, demands fixed, exactly
when no antichain of its order exceeds a capacity at the steps' clamped peaks
(:mod:`peakopt.oracle.flows`). So the POSs safe for every realisation are those whose nominal
timetables are schedules of the *peak problem*: the same workflow with each step holding its
clamped peak for its whole run. Conversely, the resource flow of any schedule of the peak
problem is such a POS, whose earliest starts come no later. The smallest nominal makespan over
safe POSs is therefore the optimum of the peak problem: :func:`solve_robust` solves it with
:func:`peakopt.solver.solve` (proven optimal or bounded exactly as ``solve`` is), takes the
flow edges of the schedule found and returns the POS's earliest starts at nominal durations,
checked by the oracle (:func:`peakopt.oracle.flows.pos_overflow` and the metrics) before it is
returned, like every solver result.
"""

from __future__ import annotations

from typing import Any, Literal

from peakopt.models import Machine, Schedule, SolveResult, Task, Workflow, content_hash
from peakopt.oracle import cva_floor, evaluate, measure, same_time
from peakopt.oracle.exact import on_grid, to_float
from peakopt.oracle.flows import earliest_starts, pos_overflow, resource_flow_edges
from peakopt.solver.solve import solve

#: What a robust reference minimises: the makespan at nominal durations, or its sample mean.
Robust = Literal["nominal", "expected"]
ROBUST: tuple[Robust, ...] = ("nominal", "expected")


def peak_task(task: Task) -> Task:
    """The step with a constant profile: its exact total length and, per resource, its peak.

    The peak counts the segments of positive length only (a zero-length segment holds nothing);
    the solver clamps it to the capacity.
    """
    if task.profile is None:
        return task
    exponent, lengths = on_grid(s.duration for s in task.segments)
    demand: dict[str, float] = {}
    for segment in task.segments:
        if segment.duration > 0:
            for resource, amount in segment.demand.items():
                demand[resource] = max(demand.get(resource, 0.0), amount)
    length = to_float(sum(lengths), exponent)
    return task.model_copy(update={"profile": None, "duration": length, "demand": demand})


def peak_workflow(workflow: Workflow) -> Workflow:
    """The peak problem of ``workflow``: every step holds its peak for its whole run."""
    return workflow.model_copy(update={"tasks": tuple(peak_task(t) for t in workflow.tasks)})


def solve_robust(
    workflow: Workflow, machine: Machine, *, robust: Robust = "nominal", **options: Any
) -> SolveResult:
    """The partial-order schedule safe for every realisation of the durations, shortest at nominal ones.

    Parameters
    ----------
    workflow, machine
        The instance; demands are taken as fixed (clamped to capacity, as ``solve`` does).
    robust
        ``nominal``: the smallest makespan at nominal durations (the optimum of the peak
        problem, see the module docstring).
    **options
        Passed to :func:`peakopt.solver.solve` (``time_limit``, ``workers``, ``seed``,
        ``backend``, ``gap_limit``, ``progress``...).

    Returns
    -------
    SolveResult
        As ``solve``'s, with ``edges`` the resource-flow edges, ``starts`` the POS's earliest
        starts at nominal durations, ``makespan`` theirs, ``lower_bound`` a proven bound of the
        robust optimum, and ``params["robust"]`` the mode. An ``error`` record if the oracle
        rejects the POS.
    """
    if robust not in ROBUST:
        raise ValueError(f"robust must be one of {ROBUST}, got {robust!r}")
    result = solve(peak_workflow(workflow), machine, **options)
    update: dict[str, Any] = {
        "params": {**result.params, "robust": robust},
        "workflow_hash": content_hash(workflow),
        "cva_floor": cva_floor(measure(workflow, machine)),
    }
    if result.starts is None or result.status not in ("optimal", "feasible"):
        return result.model_copy(update=update)
    return result.model_copy(update={**update, **_partial_order(workflow, machine, result)})


def _partial_order(workflow: Workflow, machine: Machine, result: SolveResult) -> dict[str, Any]:
    """The POS of the peak problem's schedule, as the fields of the robust result, checked."""
    assert result.starts is not None and result.makespan is not None and result.lower_bound is not None
    try:
        edges = resource_flow_edges(workflow, machine, result.starts)
    except ValueError as exc:
        return _rejected(f"no resource flow from the peak problem's schedule: {exc}")
    starts = earliest_starts(workflow, edges)
    score = evaluate(workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts))
    overflow = pos_overflow(workflow, machine, edges)
    # the POS's earliest starts are no later than the schedule it was built from
    shorter = score.makespan <= result.makespan or same_time(score.makespan, result.makespan)
    if overflow is not None or not (score.valid and score.safe and shorter):
        reasons = [*score.reasons, *([str(overflow)] if overflow else [])]
        if not shorter:
            reasons.append(f"its makespan {score.makespan:g} exceeds the solved {result.makespan:g}")
        return _rejected("; ".join(reasons) or f"avoidable cva {score.avoidable_cva:g}")
    makespan = score.makespan
    status = "optimal" if result.status == "optimal" or makespan <= result.lower_bound else "feasible"
    lower = makespan if status == "optimal" else min(result.lower_bound, makespan)
    return {"starts": starts, "edges": edges, "makespan": makespan, "lower_bound": lower, "status": status}


def _rejected(why: str) -> dict[str, Any]:
    return {"status": "error", "message": f"internal error: the oracle rejects the robust schedule: {why}"}
