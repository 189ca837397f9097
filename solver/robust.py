"""The robust reference: the shortest partial-order schedule that is safe whatever the durations.

A partial-order schedule (POS: the dependencies plus resource-flow edges, run as soon as they
allow) keeps every capacity under every realisation of the durations, demands fixed, exactly
when no antichain of its order exceeds a capacity at the steps' clamped peaks
(:mod:`peakopt.oracle.uncertain.flows`). So the POSs safe for every realisation are those whose nominal
timetables are schedules of the *peak problem*: the same workflow with each step holding its
clamped peak for its whole run. Conversely, the resource flow of any schedule of the peak
problem is such a POS, whose earliest starts come no later. The smallest nominal makespan over
safe POSs is therefore the optimum of the peak problem: :func:`solve_robust` solves it with
:func:`peakopt.solver.solve` (proven optimal or bounded exactly as ``solve`` is), takes the
flow edges of the schedule found and returns the POS's earliest starts at nominal durations,
checked by the oracle (:func:`peakopt.oracle.uncertain.flows.pos_overflow` and the metrics) before it is
returned, like every solver result.
"""

from __future__ import annotations

import time
from typing import Any

from peakopt.models import Machine, Schedule, SolveResult, Task, Workflow, nominal_hash
from peakopt.oracle import cva_floor, evaluate, measure, same_time
from peakopt.oracle.base.exact import on_grid, to_float
from peakopt.oracle.uncertain.flows import pos_earliest_starts, pos_overflow, resource_flow_edges
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.solver.expected import PosCandidate, best_expected, candidates, overflow_share
from peakopt.solver.names import ROBUST, SAMPLES, Robust


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
    workflow: Workflow,
    machine: Machine,
    *,
    robust: Robust = "nominal",
    samples: int = SAMPLES,
    noise: Noise | None = None,
    **options: Any,
) -> SolveResult:
    """The partial-order schedule safe for every realisation of the durations, shortest at nominal ones.

    Parameters
    ----------
    workflow, machine
        The instance; demands are taken as fixed (clamped to capacity, as ``solve`` does).
    robust
        ``nominal``: the smallest makespan at nominal durations (the optimum of the peak
        problem, see the module docstring). ``expected``: among candidate POSs, the smallest
        mean makespan over ``samples`` scenarios (:mod:`peakopt.solver.expected`).
    samples
        Scenarios to best_expected on, and as many further ones to report on (``expected``) and to
        estimate the probability of overflow on, where demands vary.
    noise
        PeakBench's uniform perturbation instead of the tasks' own ``varies``
        (:func:`peakopt.oracle.uncertain.scenarios.draw`).
    **options
        Passed to :func:`peakopt.solver.solve` (``time_limit``, ``workers``, ``seed`` — also the
        scenarios' —, ``backend``, ``gap_limit``, ``progress``...).

    Returns
    -------
    SolveResult
        As ``solve``'s, with ``edges`` the resource-flow edges, ``starts`` the POS's earliest
        starts at nominal durations, ``makespan`` theirs, ``lower_bound`` a proven bound of the
        robust optimum at nominal durations, and ``params["robust"]`` the mode; the expected
        figures and the probability of overflow in ``params`` (see the Robust references page).
        An ``error`` record if the oracle rejects the POS.
    """
    if robust not in ROBUST:
        raise ValueError(f"robust must be one of {ROBUST}, got {robust!r}")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples!r}")
    # imported here: `peakopt solve --help` reads this module's names and must not pay for OR-Tools
    from peakopt.solver.pipeline import solve

    began = time.perf_counter()
    peak = peak_workflow(workflow)
    result = solve(peak, machine, **options)
    params: dict[str, Any] = {**result.params, "robust": robust}
    update: dict[str, Any] = {
        "params": params,
        "workflow_hash": nominal_hash(workflow),
        "cva_floor": cva_floor(measure(workflow, machine)),
    }
    if result.starts is None or result.status not in ("optimal", "feasible"):
        return result.model_copy(update=update)
    try:
        pool = [PosCandidate("optimum/most", resource_flow_edges(workflow, machine, result.starts))]
    except ValueError as exc:
        return result.model_copy(update={**update, **_rejected(f"no resource flow from its schedule: {exc}")})
    scenarios = None
    if robust == "expected" or noise is not None or any(t.varies is not None for t in workflow.tasks):
        scenarios = draw(workflow, 2 * samples, seed=result.params.get("seed", 0), noise=noise)
        params.update(samples=samples, noise=None if noise is None else [noise.duration, noise.demand])
    notes = [result.message] if result.message else []
    if robust == "expected":
        assert scenarios is not None
        if scenarios.lengths == scenarios.lengths[:1] * len(scenarios) and not any(
            s != 1.0 for row in scenarios.scales for s in row
        ):
            notes.append("nothing varies (no task's varies, no noise): every scenario is the nominal one")
        pool = candidates(workflow, machine, peak, result.starts, pool, seed=params.get("seed", 0))
        choice = best_expected(
            workflow, machine, pool, scenarios.lengths[:samples], scenarios.lengths[samples:]
        )
        pool = [choice.candidate]
        params.update(choice.params())
        notes.append(choice.summary(samples))
    fields = _checked(workflow, machine, result, pool[0])
    if scenarios is not None and fields["status"] != "error":
        share = overflow_share(workflow, machine, pool[0], scenarios, range(samples, 2 * samples))
        params["overflow_probability"] = share
        if share:
            notes.append(f"demands vary: the POS overflows a capacity in {share:.1%} of {samples} scenarios")
    if notes and fields["status"] != "error":
        fields["message"] = "; ".join(notes)
    fields["seconds"] = time.perf_counter() - began
    return result.model_copy(update={**update, **fields})


def _checked(
    workflow: Workflow, machine: Machine, result: SolveResult, chosen: PosCandidate
) -> dict[str, Any]:
    """The fields of the robust result for the POS ``chosen``, checked by the oracle."""
    assert result.makespan is not None and result.lower_bound is not None
    edges = chosen.edges
    starts = pos_earliest_starts(workflow, edges)
    schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=starts)
    score = evaluate(workflow, machine, schedule, soft_as_hard=True)  # it overflows no resource at all
    overflow = pos_overflow(workflow, machine, edges)
    # the POS of the solved schedule starts no later than it
    nominal = chosen.source == "optimum/most"
    shorter = not nominal or score.makespan <= result.makespan or same_time(score.makespan, result.makespan)
    if overflow is not None or not (score.valid and score.safe and shorter):
        reasons = [*score.reasons, *([str(overflow)] if overflow else [])]
        if not shorter:
            reasons.append(f"its makespan {score.makespan:g} exceeds the solved {result.makespan:g}")
        return _rejected("; ".join(reasons) or f"avoidable cva {score.avoidable_cva:g}")
    makespan = score.makespan
    proven = (nominal and result.status == "optimal") or makespan <= result.lower_bound
    lower = makespan if proven else min(result.lower_bound, makespan)
    status = "optimal" if proven else "feasible"
    return {"starts": starts, "edges": edges, "makespan": makespan, "lower_bound": lower, "status": status}


def _rejected(why: str) -> dict[str, Any]:
    return {"status": "error", "message": f"internal error: the oracle rejects the robust schedule: {why}"}
