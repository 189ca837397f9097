"""Re-planning a controlled run when a step overruns: the rest solved again around what has run.

When a running step has run longer than its planned duration by more than
:attr:`Replan.threshold` of it and :attr:`Replan.grace` seconds, the
:class:`~peakopt.runtime.controller.Controller` re-plans (:func:`replan`): the steps that
started are **fixed** where they started (those that ended with their actual durations, those
still running with at least their time so far; an overrun step is assumed to run twice what it
has run so far, :data:`OVERRUN_GUESS`, and becomes due again past that, so a step that runs
ten times longer than declared re-plans about three times), the steps not started yet are
**released** at now, and :func:`peakopt.solver.solve` finds the best schedule of the rest
within :attr:`Replan.time_limit`. The run goes on in the new plan's order
(:class:`RestOfPlan`); the guard still admits only what fits. Each re-plan is recorded in the
trace (:class:`~peakopt.runtime.trace.ReplanRecord`).

Every instant and duration of the re-plan is rounded **up** to a millisecond, one monotone
rounding, so steps that ran one after the other stay so and the grid stays coarse; a step
rounded up can only end later, which keeps the plan safe.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from peakopt.models import Machine, PeakoptError, SolveResult, Workflow
from peakopt.oracle.base.exact import fraction
from peakopt.oracle.uncertain.policies import Positional, order_decider, plan_sequence
from peakopt.oracle.uncertain.scenarios import Scenarios
from peakopt.runtime.names import REPLAN_GRACE, REPLAN_LIMIT, THRESHOLD
from peakopt.runtime.trace import PLACES, ReplanRecord

#: Decimal places of a re-plan's times (1 ms).
REPLAN_PLACES = 3
#: An overrun step is assumed to run this many times what it has run so far (doubling: the
#: classic guess for an unknown remaining time, which keeps the re-plans logarithmic in the overrun).
OVERRUN_GUESS = 2.0


@dataclass(frozen=True)
class Replan:
    """When and how a controlled run re-plans.

    Attributes
    ----------
    threshold, grace
        A running step overruns once it has run ``(1 + threshold) × planned + grace`` seconds,
        ``planned`` its declared duration until a re-plan assumes a longer one (the grace keeps
        a step declared to take no time, or a process's start-up, from re-planning at once).
    time_limit
        Seconds for each re-plan's solve (CP-SAT, one worker).
    seed
        The solver's seed.
    """

    threshold: float = THRESHOLD
    time_limit: float = REPLAN_LIMIT
    seed: int = 0
    grace: float = REPLAN_GRACE

    def __post_init__(self) -> None:
        for name in ("threshold", "grace"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"the re-plan {name} must be a number >= 0, got {value!r}")
        if not (math.isfinite(self.time_limit) and self.time_limit > 0):
            raise ValueError(
                f"the re-plan time limit must be a positive number of seconds, got {self.time_limit!r}"
            )

    def due(self, planned: float) -> float:
        """How long a step planned to run ``planned`` seconds may run before it overruns."""
        return planned * (1 + self.threshold) + self.grace


@dataclass(frozen=True)
class Moment:
    """What a run knows when it re-plans (seconds since the run started).

    Attributes
    ----------
    now
        The time of the re-plan.
    starts
        Every step that started -> its start.
    ends
        Every step that ended (ok or failed) -> its end.
    lengths
        Every running step -> the run time to assume (at least its time so far).
    skipped
        Steps that will never run (a predecessor failed).
    """

    now: float
    starts: Mapping[str, float]
    ends: Mapping[str, float]
    lengths: Mapping[str, float]
    skipped: frozenset[str] = frozenset()


def up(seconds: float | Fraction) -> Fraction:
    """``seconds`` rounded up to the re-plan's grid (1 ms), exactly."""
    grid = 10**REPLAN_PLACES
    value = seconds if isinstance(seconds, Fraction) else fraction(seconds)
    return Fraction(math.ceil(value * grid), grid)


def pins_at(workflow: Workflow, moment: Moment) -> tuple[Workflow, dict[str, float], dict[str, float]]:
    """The rest of the run as a re-planning problem: the workflow as it stands, fixed, release.

    The workflow leaves out the skipped steps; a step that started runs for its actual (or
    assumed) time, its profile's segments in proportion; the others keep their declared ones.
    """
    tasks = tuple(t for t in workflow.tasks if t.id not in moment.skipped)
    rest = workflow.model_copy(update={"tasks": tasks})
    fixed: dict[str, float] = {}
    lengths = []
    for task in tasks:
        if task.id not in moment.starts:
            lengths.append(task.length)
            continue
        start = up(moment.starts[task.id])
        if task.id in moment.ends:
            end = up(moment.ends[task.id])
        else:
            end = up(max(fraction(moment.starts[task.id] + moment.lengths[task.id]), fraction(moment.now)))
        fixed[task.id] = float(start)
        lengths.append(float(max(end - start, Fraction(0))))
    released = float(up(moment.now))
    release = {t.id: released for t in tasks if t.id not in moment.starts}
    scenario = Scenarios(
        nominal=rest, lengths=(tuple(lengths),), scales=((1.0,) * len(tasks),), places=REPLAN_PLACES
    )
    return scenario.workflow(0), fixed, release


def warm() -> None:
    """Load the solver now, so that a run's first re-plan does not pay for importing CP-SAT."""
    import peakopt.solver  # noqa: F401  (here: only a run that may re-plan needs it)


def replan(
    workflow: Workflow, machine: Machine, moment: Moment, options: Replan
) -> tuple[Workflow, SolveResult]:
    """The best schedule of the rest within ``options.time_limit`` (see the module docstring).

    Raises
    ------
    PeakoptError
        When the solver refuses the pins (:class:`~peakopt.solver.pins.PinError`: e.g. an
        unguarded run whose started steps already overflow a capacity).
    """
    from peakopt.solver import solve  # here: the solver (and CP-SAT) loads only for a run that re-plans

    rest, fixed, release = pins_at(workflow, moment)
    result = solve(
        rest,
        machine,
        time_limit=options.time_limit,
        workers=1,
        seed=options.seed,
        fixed=fixed,
        release=release,
    )
    return rest, result


class RestOfPlan(Positional):
    """The ``order`` execution of a re-plan over the steps not started yet (one per re-plan: stateful).

    Steps start in the plan's order as they become ready and fit; a step waits until every
    step before it in that order has started (the simulator's ``order`` policy).
    """

    def __init__(
        self,
        workflow: Workflow,
        machine: Machine,
        rest: Workflow,
        result: SolveResult,
        started: Iterable[str],
    ) -> None:
        super().__init__(workflow, machine)
        assert result.schedule is not None
        done = set(started)
        sequence = [rest.tasks[i].id for i in plan_sequence(rest, result.schedule)]
        self.sequence = [self.index[s] for s in sequence if s not in done]
        self.decide = order_decider(self.sequence, self.needs, greedy=False)

    def positions(
        self, now: float, queue: list[int], running: dict[int, float], free: list[float]
    ) -> Iterable[int]:
        """The new plan's order (see :func:`~peakopt.oracle.uncertain.policies.order_decider`)."""
        return self.decide(now, queue, running, free)


def record(
    at: float,
    overrun: Mapping[str, tuple[float, float]],
    began: float,
    outcome: tuple[Workflow, SolveResult] | PeakoptError,
    failed: Sequence[str] = (),
) -> ReplanRecord:
    """The trace's record of one re-plan: when, why, how long, what."""
    reason = "; ".join(
        [f"{step!r} ran {ran:.3f} s, planned {planned:.3f} s" for step, (ran, planned) in overrun.items()]
        + [f"{step!r} failed" for step in failed]
    )
    when, steps, seconds = round(at, PLACES), (*overrun, *failed), round(time.perf_counter() - began, PLACES)
    if isinstance(outcome, PeakoptError):
        return ReplanRecord(
            at=when, steps=steps, reason=reason, seconds=seconds, status="error", message=str(outcome)
        )
    rest, result = outcome
    fixed: Mapping[str, float] = result.params.get("fixed", {})
    status: Literal["optimal", "feasible", "error"] = "error"
    if result.status == "optimal" or result.status == "feasible":
        status = result.status
    return ReplanRecord(
        at=when,
        steps=steps,
        reason=reason,
        seconds=seconds,
        status=status,
        makespan=result.makespan,
        plan=None if status == "error" else result.starts,
        assumed={t.id: t.length for t in rest.tasks if t.id in fixed},
        message=result.message,
    )
