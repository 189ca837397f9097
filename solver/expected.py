"""Robust references in expectation: among safe partial-order schedules, the shortest on average.

Every partial-order schedule (POS) built from a schedule of the peak problem is safe whatever
the durations (:mod:`peakopt.solver.robust`); they differ in how well they absorb late steps.
``solve --robust expected`` keeps the one with the smallest mean makespan over sampled
scenarios among a pool of candidates (a sample-average approximation):

- the schedules: the peak problem's proven optimum (or best found) and the schedules of the
  forward-backward improved serial and parallel schedule-generation schemes under each
  priority rule (:data:`METHODS`), all of the peak problem;
- the flows of each: linking to the ended step with the most units (few edges) or to the one
  that ended first (slack), :func:`peakopt.oracle.uncertain.flows.resource_flow_edges`.

A POS run as soon as it allows needs no resource bookkeeping (it is safe), so its makespan
under a scenario is a longest path with the realised lengths (the simulator's ``pos``
policy). The candidate is chosen on one set of scenarios and its mean (with a bootstrap
interval) is reported on as many further ones, so that the figure is not the minimum of noisy
means, which would flatter it. It is the best found among the candidates, not a proven
optimum in expectation. Where demands vary too, :func:`overflow_share` measures how often the
chosen POS still overflows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from peakopt.models import Edge, Machine, Schedule, Workflow
from peakopt.oracle.tables.intervals import Interval, mean_interval
from peakopt.oracle.tables.montecarlo import NonFiniteError, monte_carlo
from peakopt.oracle.uncertain.flows import PREFER, pos_earliest_starts, resource_flow_edges
from peakopt.oracle.uncertain.scenarios import Scenarios
from peakopt.oracle.uncertain.simulate import Simulation
from peakopt.solver.heuristics import run

#: The heuristics whose schedules of the peak problem seed candidates, besides the optimum's.
METHODS = tuple(
    f"fbi:sgs:{scheme}:{rule}"
    for scheme in ("serial", "parallel")
    for rule in ("lft", "lst", "mts", "grpw", "spt", "lpt", "cp", "nrp")
)


@dataclass(frozen=True)
class PosCandidate:
    """A safe partial-order schedule and where it came from.

    Attributes
    ----------
    source
        ``SCHEDULE/FLOW``: ``optimum`` or a heuristic's name, then ``most`` or ``slack``.
    edges
        Its resource-flow edges.
    """

    source: str
    edges: tuple[Edge, ...]

    def plan(self, workflow: Workflow, machine: Machine) -> Schedule:
        """The POS as a plan for the ``pos`` execution policy (its earliest starts, its edges)."""
        starts = pos_earliest_starts(workflow, self.edges)
        return Schedule(workflow=workflow.id, machine=machine.name, starts=starts, edges=self.edges)


def candidates(
    workflow: Workflow,
    machine: Machine,
    peak: Workflow,
    optimum: Mapping[str, float],
    first: Sequence[PosCandidate] = (),
    *,
    seed: int = 0,
) -> list[PosCandidate]:
    """The pool: ``first``, then the flows of the optimum and of each heuristic schedule of ``peak``.

    ``peak`` is the peak problem (:func:`peakopt.solver.robust.peak_workflow`); ``first`` holds
    the nominal reference. A POS met before (the same edges) is not repeated.
    """
    schedules = [("optimum", optimum), *((m, run(peak, machine, m, seed=seed).starts) for m in METHODS)]
    pool: dict[frozenset[Edge], PosCandidate] = {frozenset(c.edges): c for c in first}
    for name, starts in schedules:
        for prefer in PREFER:
            edges = resource_flow_edges(workflow, machine, starts, prefer=prefer)
            pool.setdefault(frozenset(edges), PosCandidate(f"{name}/{prefer}", edges))
    return list(pool.values())


def makespans(
    workflow: Workflow, machine: Machine, candidate: PosCandidate, lengths: Sequence[Sequence[float]]
) -> list[float]:
    """The POS's makespan under each row of realised lengths (tasks in workflow order).

    The ``pos`` policy of the simulator: a safe POS needs no admission, so this is a longest path.
    """
    simulation = Simulation(workflow, machine, "pos", candidate.plan(workflow, machine))
    found = []
    for row in lengths:
        starts = simulation.run(row)
        found.append(max((t + x for t, x in zip(starts, row, strict=True)), default=0.0))
    return found


@dataclass(frozen=True)
class Choice:
    """The candidate with the smallest mean makespan, and its figures on further scenarios.

    Attributes
    ----------
    candidate
        The chosen POS.
    count
        Candidates compared.
    mean, interval
        Its mean makespan on the report scenarios, and the 95 % bootstrap interval of that mean.
    nominal
        The first candidate's (the nominal reference's) mean on the same scenarios.
    """

    candidate: PosCandidate
    count: int
    mean: float
    interval: Interval | None
    nominal: float

    def params(self) -> dict[str, Any]:
        """The figures a record's ``params`` carry."""
        interval = None if self.interval is None else [self.interval.low, self.interval.high]
        return {
            "expected_makespan": self.mean,
            "expected_interval": interval,
            "nominal_expected_makespan": self.nominal,
            "candidates": self.count,
            "chosen": self.candidate.source,
        }

    def summary(self, samples: int) -> str:
        """One clause for a record's message: what was chosen, on what, and how sure it is."""
        interval = "" if self.interval is None else f" [{self.interval.low:g}, {self.interval.high:g}]"
        return (
            f"expected: the best of {self.count} candidate POSs by mean makespan over {samples} "
            f"scenarios ({self.candidate.source}), mean {self.mean:g}{interval} over {samples} further "
            f"ones (the nominal reference's: {self.nominal:g}); best found, not proven"
        )


def best_expected(
    workflow: Workflow,
    machine: Machine,
    pool: Sequence[PosCandidate],
    select: Sequence[Sequence[float]],
    report: Sequence[Sequence[float]],
) -> Choice:
    """The candidate of smallest mean makespan on ``select``, measured on ``report``.

    Ties go to the earlier candidate (the nominal reference first).
    """
    means = [_mean(makespans(workflow, machine, c, select)) for c in pool]
    best = min(range(len(pool)), key=lambda k: (means[k], k))
    values = makespans(workflow, machine, pool[best], report)
    nominal = values if best == 0 else makespans(workflow, machine, pool[0], report)
    return Choice(pool[best], len(pool), _mean(values), mean_interval(values), _mean(nominal))


def _mean(values: Sequence[float]) -> float:
    """The mean makespan; refused (never ``inf`` in a record) when a makespan is not a finite number."""
    bad = [v for v in values if not math.isfinite(v)]
    if bad:
        raise NonFiniteError(f"a sampled makespan is {bad[0]!r}, not a finite number: no mean is computed")
    return sum(values) / len(values) if values else 0.0


def overflow_share(
    workflow: Workflow,
    machine: Machine,
    candidate: PosCandidate,
    scenarios: Scenarios,
    indices: Iterable[int],
) -> float:
    """The share of the scenarios ``indices`` under which the POS overflows a capacity avoidably.

    Zero whenever the scenarios leave demands at their nominal values (the POS is safe for any
    durations), so it is measured — by :func:`peakopt.oracle.tables.montecarlo.monte_carlo` under the
    ``pos`` policy — only when some demand is scaled or a zero length grows.
    """
    picked = list(indices)
    nominal = [t.length for t in workflow.tasks]
    varies = [
        k
        for k in picked
        if any(s != 1.0 for s in scenarios.scales[k])
        or any(x > 0 and not n for x, n in zip(scenarios.lengths[k], nominal, strict=True))
    ]
    if not picked or not varies:
        return 0.0
    subset = replace(
        scenarios,
        lengths=tuple(scenarios.lengths[k] for k in picked),
        scales=tuple(scenarios.scales[k] for k in picked),
    )
    simulation = Simulation(workflow, machine, "pos", candidate.plan(workflow, machine))
    figures = monte_carlo(workflow, machine, simulation, subset, execution="pos")
    return figures.overflow_rate or 0.0
