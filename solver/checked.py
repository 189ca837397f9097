"""The oracle's check that every result of the solver passes: :func:`solve` and :func:`quick_optimum`.

A search (a backend, a heuristic shortcut, a bound) only *claims* a schedule, its makespan and
whether it is proven; the result is built here from what the oracle finds of the real starts.
A schedule the oracle finds invalid or unsafe, a makespan it does not give, or a broken pin
makes the result ``error`` (``internal error: the oracle rejects the schedule: ...``), never a
reference: a lying layer cannot make an optimum.

:func:`judge` is the oracle's verdict on one schedule (a reference overflows no resource, soft
ones included; the judge's exact sweep and metrics); :func:`verified` turns a claim and that
verdict into the :class:`~peakopt.models.SolveResult`, with the oracle's full score
(:func:`peakopt.oracle.evaluate`) for the reasons of a claim it rejects. :class:`Origin` is what
every result reports of the search that found it, a verified claim's or one without a
schedule (:meth:`Origin.result`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from peakopt.models import Machine, Schedule, SolveResult, Workflow, nominal_hash
from peakopt.models.schedule import Status
from peakopt.oracle import broken_pins, evaluate, measure
from peakopt.oracle.judge import metrics
from peakopt.solver.bounds import float_below
from peakopt.solver.pins import Pins

#: What a claim the oracle rejects is reported as (tests and callers match on it).
REJECTED = "internal error: the oracle rejects the schedule: "


@dataclass(frozen=True)
class Verdict:
    """What a result takes from the oracle's sweep of its starts (:func:`judge`).

    Attributes
    ----------
    valid, safe, makespan, cva_floor
        As :func:`peakopt.oracle.evaluate` reports them, every resource hard.
    """

    valid: bool
    safe: bool
    makespan: float
    cva_floor: float


@dataclass(frozen=True)
class Origin:
    """What a result reports of the search that found it, whatever it found.

    Attributes
    ----------
    solver, params, seconds, exact, tick
        As :class:`~peakopt.models.SolveResult` reports them.
    hashes
        Whether the result carries the content hashes of the workflow and the machine (a
        reference does; a hindsight bound, one of tens of thousands kept by its own content
        key, leaves them None: they cost a third of the oracle's check).
    """

    solver: str
    params: dict[str, object]
    seconds: float
    exact: bool
    tick: float
    hashes: bool = True

    def result(
        self,
        workflow: Workflow,
        machine: Machine,
        status: Status,
        message: str | None = None,
        *,
        makespan: float | None = None,
        lower_bound: float | None = None,
        starts: dict[str, float] | None = None,
        cva_floor: float = 0.0,
    ) -> SolveResult:
        """The result of this search on the instance: ``status``, ``message`` and the figures given."""
        return SolveResult(
            workflow=workflow.id,
            machine=machine.name,
            status=status,
            makespan=makespan,
            lower_bound=lower_bound,
            starts=starts,
            cva_floor=cva_floor,
            solver=self.solver,
            params=self.params,
            seconds=self.seconds,
            exact=self.exact,
            tick=self.tick,
            message=message,
            workflow_hash=nominal_hash(workflow) if self.hashes else None,
            machine_hash=nominal_hash(machine) if self.hashes else None,
        )


def judge(workflow: Workflow, machine: Machine, starts: Mapping[str, float]) -> Verdict:
    """The oracle's verdict on ``starts``, every resource hard (a reference overflows none, soft or not).

    The exact sweep and the judge's own metrics (:mod:`peakopt.oracle.judge.metrics`), without
    the figures a result does not report (MRU, per-resource scores, the slowed makespan): a
    hindsight bound is one of tens of thousands, and the full score cost twice the sweep.
    """
    m = measure(workflow, machine, starts, soft_as_hard=True)
    return Verdict(metrics.valid(m), metrics.safe(m), metrics.makespan(m), metrics.cva_floor(m))


def verified(
    workflow: Workflow,
    machine: Machine,
    starts: dict[str, float],
    score: Verdict,
    *,
    proven: bool,
    lower: Fraction | float,
    agrees: bool,
    pins: Pins,
    origin: Origin,
    message: str | None = None,
) -> SolveResult:
    """The result of a claim, as the oracle's ``score`` of its ``starts`` allows it.

    Parameters
    ----------
    workflow, machine
        The instance.
    starts
        The claimed schedule in seconds; ``score`` is :func:`judge`'s verdict on it.
    proven
        Whether the search claims the schedule optimal.
    lower
        The lower bound it claims (seconds, exact), reported rounded down, never above the
        makespan; a proven optimum is reported as the makespan.
    agrees
        Whether the oracle's makespan is the one the search claims (the caller compares them,
        exactly or, on rounded data, as at most the rounded one).
    pins
        The fixed starts and release times the schedule must keep.
    origin
        What the result reports of the search that claims it (:meth:`Origin.result`).
    message
        As the result reports it.

    Returns
    -------
    SolveResult
        ``optimal`` or ``feasible`` with the oracle's makespan; ``error`` with the oracle's
        reasons when the schedule is invalid, unsafe, not the claimed one or breaks a pin.
    """
    makespan = score.makespan
    bound = makespan if proven else min(float_below(Fraction(lower)), makespan)
    status: Literal["optimal", "feasible", "error"] = "optimal" if proven else "feasible"
    # the verdict's floor: the steps' own overload, the same for every schedule (measuring it
    # alone again cost a second sweep of the workflow per result)
    floor = score.cva_floor
    if not math.isfinite(floor):  # e.g. a demand of 1e300 on a capacity of 1e-300
        floor = sys.float_info.max
        message = "; ".join(filter(None, [message, "cva floor past the largest float, reported as it"]))
    schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=starts)
    broken = broken_pins(schedule, pins.fixed, pins.release)
    if not (score.valid and score.safe and agrees and not broken):
        # the full score, for its reasons: only a rejected claim pays for it
        found = evaluate(workflow, machine, schedule, soft_as_hard=True)
        other = [] if agrees else [f"its starts end at {makespan:g} s, not where the search says"]
        reasons = [*found.reasons, *broken, *other, f"avoidable cva {found.avoidable_cva:g}"]
        status, message = "error", REJECTED + "; ".join(reasons)
    return origin.result(
        workflow,
        machine,
        status,
        message,
        makespan=makespan,
        lower_bound=bound,
        starts=starts,
        cva_floor=floor,
    )
