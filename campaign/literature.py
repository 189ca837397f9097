"""The stochastic RCPSP literature's protocol, run on peakopt's policies, with the column it never had.

For one instance (:func:`run_instance`) every policy is judged on the same scenarios of each of
the literature's five distributions (:mod:`peakopt.oracle.uncertain.literature`: common random
numbers), ``replications`` of them:

- ``order (optimum)``: the optimum (:func:`peakopt.solver.solve`) executed by its order under
  admission (the simulator's ``order``: an activity-based policy on the optimum's list);
- ``pos (robust)``: the robust reference (:func:`peakopt.solver.solve_robust`) as its
  partial-order schedule;
- ``admission``: the admission controller's online form (ready steps in ready order, each
  when its clamped peak fits);
- ``GA list (RB)``: the genetic algorithm's activity list
  (:func:`peakopt.solver.heuristics.genetic_schedule`) as the literature's resource-based policy
  (``order`` with ``greedy=True``).

Per cell (instance × distribution × policy) it reports the literature's metric, the expected
makespan's deviation from the critical-path length at the deterministic durations, and the
expected gap to each scenario's own optimum, the perfect-information bound, in two forms:

- over every replication, against a valid lower bound of the scenario's optimum (the larger of
  its critical path and its energy bound): an upper bound on the true gap (``bound_gap``);
- over the first ``optimum_replications`` scenarios, against the scenario's optimum, bracketed
  by :func:`peakopt.solver.quick_optimum` (``optimum_limit`` seconds of CP-SAT at most): below by
  the largest of its bounds (the solver's, the critical path, the energy bound), above by the
  shortest safe schedule known for the scenario (the solver's best, and every policy's own run
  on it). Where the two meet the optimum is proven and the gap exact; elsewhere the gap against
  the lower side is an upper estimate (``gap_high``) and against the upper side a lower one
  (``gap_low``, never negative): the true gap lies between them.

Every realised schedule is scored by the vectorised oracle (:class:`RealisedScorer`) and those of
the solved scenarios by the exact one (:func:`peakopt.oracle.evaluate`); a cell counts its unsafe
runs and its negative gaps, which must both be zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.base.exact import TOLERANCE
from peakopt.oracle.tables.intervals import Interval, mean_interval
from peakopt.oracle.tables.montecarlo import Runs, run_scenarios
from peakopt.oracle.uncertain.literature import (
    LITERATURE_DISTRIBUTIONS,
    LiteratureDistribution,
    cpl_deviation,
    critical_paths,
    draw_literature,
    energy_bounds,
    relative_gaps,
)
from peakopt.oracle.uncertain.simulate import Simulation
from peakopt.oracle.vector.realised import RealisedScorer
from peakopt.solver import quick_optimum, solve, solve_robust
from peakopt.solver.heuristics import genetic_schedule, policy_factory

if TYPE_CHECKING:
    from peakopt.models import SolveResult
    from peakopt.oracle.base.arrays import Floats
    from peakopt.oracle.uncertain.scenarios import Scenarios

#: The policies, in the table's order.
PROTOCOL_POLICIES = ("order (optimum)", "pos (robust)", "admission", "GA list (RB)")


@dataclass(frozen=True)
class Protocol:
    """How the protocol is run.

    Attributes
    ----------
    replications
        Scenarios per instance and distribution, the same for every policy.
    optimum_replications
        Of them, how many (the first) are solved for their own optimum.
    optimum_limit
        Seconds of CP-SAT search per solved scenario (:func:`peakopt.solver.quick_optimum`).
    solve_limit
        Seconds for the nominal optimum and for the robust reference (one worker each).
    ga_seconds
        The genetic algorithm's budget at nominal durations.
    seed
        Seed of the scenarios, the solvers and the genetic algorithm.
    distributions
        Which of the five to run.
    """

    replications: int = 1000
    optimum_replications: int = 5
    optimum_limit: float = 1.0
    solve_limit: float = 10.0
    ga_seconds: float = 1.0
    seed: int = 0
    distributions: tuple[LiteratureDistribution, ...] = LITERATURE_DISTRIBUTIONS

    def __post_init__(self) -> None:
        if self.replications < 1 or not 0 <= self.optimum_replications <= self.replications:
            raise ValueError(
                "replications must be at least 1 and optimum_replications in [0, replications], "
                f"got {self.replications} and {self.optimum_replications}"
            )


@dataclass(frozen=True)
class ProtocolCell:
    """One policy on one instance under one distribution.

    Attributes
    ----------
    mean_makespan
        Over every replication.
    deviation
        (mean makespan − CPL) / CPL, CPL the critical-path length at the deterministic
        durations (None when it is 0).
    bound_gap
        Mean over every replication of (makespan − the scenario's lower bound) / that bound.
    gap_high, gap_low
        Mean over the solved scenarios of the gap against the scenario optimum's lower bound and
        against its best schedule (equal where every optimum is proven; None: none solved).
    unsafe
        Runs the oracle found unsafe (the vectorised one on every run, the exact one on the
        solved scenarios).
    negative
        Runs shorter than their scenario's lower bound or proven optimum (beyond the tolerance).
    """

    mean_makespan: float
    deviation: float | None
    bound_gap: float
    gap_high: float | None
    gap_low: float | None
    unsafe: int
    negative: int


@dataclass(frozen=True)
class InstanceResult:
    """Every cell of one instance, and what its references were.

    Attributes
    ----------
    name
        The instance's name.
    cpl
        Critical-path length at the deterministic durations.
    optimum
        The nominal optimum's makespan and whether it is proven.
    solved, proven
        Per distribution, scenarios solved for their own optimum and how many of those are proven.
    cells
        (distribution, policy) -> :class:`ProtocolCell`.
    """

    name: str
    cpl: float
    optimum: tuple[float, bool]
    solved: dict[str, int] = field(default_factory=dict)
    proven: dict[str, int] = field(default_factory=dict)
    cells: dict[tuple[str, str], ProtocolCell] = field(default_factory=dict)


def protocol_simulations(
    workflow: Workflow, machine: Machine, protocol: Protocol
) -> tuple[dict[str, Simulation], SolveResult]:
    """Every policy of :data:`PROTOCOL_POLICIES` compiled on the nominal instance, and the nominal optimum.

    Raises
    ------
    RuntimeError
        When a reference has no schedule, or the genetic algorithm's plan is not safe.
    """
    limit, seed = protocol.solve_limit, protocol.seed
    optimum = solve(workflow, machine, time_limit=limit, workers=1, seed=seed)
    robust = solve_robust(workflow, machine, time_limit=limit, workers=1, seed=seed)
    for name, result in (("optimum", optimum), ("robust reference", robust)):
        if result.schedule is None or result.status not in ("optimal", "feasible"):
            raise RuntimeError(f"no {name} for {workflow.id!r}: {result.message or result.status}")
    assert optimum.schedule is not None and robust.schedule is not None
    listed = genetic_schedule(workflow, machine, seconds=protocol.ga_seconds, seed=protocol.seed)
    score = evaluate(workflow, machine, listed)
    if not (score.valid and score.safe):
        raise RuntimeError(f"the genetic algorithm's plan for {workflow.id!r} is not safe: {score.reasons}")
    return {
        PROTOCOL_POLICIES[0]: Simulation(workflow, machine, "order", optimum.schedule),
        PROTOCOL_POLICIES[1]: Simulation(workflow, machine, "pos", robust.schedule),
        PROTOCOL_POLICIES[2]: Simulation(
            workflow, machine, factory=policy_factory("admission", seed=protocol.seed)
        ),
        PROTOCOL_POLICIES[3]: Simulation(workflow, machine, "order", listed, greedy=True),
    }, optimum


def scenario_optima(
    machine: Machine, scenarios: Scenarios, count: int, protocol: Protocol
) -> tuple[list[float], list[float]]:
    """The first ``count`` scenarios' optima by ``quick_optimum``: lower bounds, best makespans."""
    lows, highs = [], []
    for k in range(count):
        found = quick_optimum(
            scenarios.workflow(k), machine, time_limit=protocol.optimum_limit, seed=protocol.seed
        )
        if found.makespan is None or found.lower_bound is None or found.status not in ("optimal", "feasible"):
            raise RuntimeError(f"scenario {k}: no optimum ({found.message or found.status})")
        lows.append(found.lower_bound)
        highs.append(found.makespan)
    return lows, highs


def run_instance(name: str, workflow: Workflow, machine: Machine, protocol: Protocol) -> InstanceResult:
    """Every policy under every distribution on one instance (see the module docstring).

    A scenario's optimum is bracketed by the largest of its bounds (the solver's, its critical
    path, its energy bound) and the shortest of its safe schedules (the solver's best and every
    policy's run on it: each is a schedule of that scenario); it is proven where they meet.
    """
    import numpy as np

    sims, optimum = protocol_simulations(workflow, machine, protocol)
    cpl = float(critical_paths(workflow, [[t.length for t in workflow.tasks]])[0])
    assert optimum.makespan is not None
    result = InstanceResult(name, cpl, (optimum.makespan, optimum.status == "optimal"))
    scorer = RealisedScorer(workflow, machine)
    solved = protocol.optimum_replications
    for distribution in protocol.distributions:
        scenarios = draw_literature(workflow, protocol.replications, distribution, seed=protocol.seed)
        lengths = np.array(scenarios.lengths)
        bounds = np.maximum(critical_paths(workflow, lengths), energy_bounds(workflow, machine, lengths))
        runs = {
            policy: run_scenarios(workflow, machine, sim, scenarios, scorer) for policy, sim in sims.items()
        }
        found = scenario_optima(machine, scenarios, solved, protocol)
        lows = np.maximum(np.array(found[0]), bounds[:solved])
        shortest = [np.where(r.scores.safe, r.scores.makespan, np.inf)[:solved] for r in runs.values()]
        highs = np.minimum.reduce([np.array(found[1]), *shortest])
        closed = relative_gaps(highs, lows) == 0
        lows = np.where(closed, highs, lows)  # proven: one value, the shortest schedule's
        result.solved[distribution], result.proven[distribution] = solved, int(closed.sum())
        for policy, sim in sims.items():
            cell = _cell(machine, sim, scenarios, runs[policy], cpl, bounds, (lows, highs))
            result.cells[distribution, policy] = cell
    return result


def _cell(
    machine: Machine,
    sim: Simulation,
    scenarios: Scenarios,
    runs: Runs,
    cpl: float,
    bounds: Floats,
    optima: tuple[Floats, Floats],
) -> ProtocolCell:
    """One policy's figures on one distribution's scenarios (the first ``len(optima[0])`` solved)."""
    lows, highs = optima
    solved = len(lows)
    spans = runs.scores.makespan
    exact = [_exact_safe(machine, sim, scenarios, k, runs.starts[k]) for k in range(solved)]
    below = spans[:solved] < lows * (1 - TOLERANCE)
    return ProtocolCell(
        mean_makespan=float(spans.mean()),
        deviation=cpl_deviation(spans, cpl),
        bound_gap=float(relative_gaps(spans, bounds).mean()),
        gap_high=float(relative_gaps(spans[:solved], lows).mean()) if solved else None,
        gap_low=float(relative_gaps(spans[:solved], highs).mean()) if solved else None,
        unsafe=int((~runs.scores.safe).sum()) + exact.count(False),
        negative=int((spans < bounds * (1 - TOLERANCE)).sum() + below.sum()),
    )


def _exact_safe(machine: Machine, sim: Simulation, scenarios: Scenarios, k: int, starts: Floats) -> bool:
    """The exact oracle's verdict on the run of scenario ``k`` (on its realised workflow)."""
    schedule: Schedule = sim.schedule([float(s) for s in starts])
    score = evaluate(scenarios.workflow(k), machine, schedule)
    return score.valid and score.safe


@dataclass(frozen=True)
class ProtocolItem:
    """One instance of a protocol run, for the campaign's executors."""

    name: str
    workflow: Workflow
    machine: Machine
    protocol: Protocol

    def deadline(self) -> float:
        """Hard limit of the item in seconds: two solves, the GA, the scenario solves, with room."""
        p = self.protocol
        solves = (
            2 * p.solve_limit + p.ga_seconds + len(p.distributions) * p.optimum_replications * p.optimum_limit
        )
        return 3 * solves + 600.0


def run_protocol_item(item: ProtocolItem) -> InstanceResult:
    """What a worker runs: :func:`run_instance` on the item."""
    return run_instance(item.name, item.workflow, item.machine, item.protocol)


def cells_of(results: Sequence[InstanceResult], distribution: str, policy: str) -> list[ProtocolCell]:
    """The cells of one table row, an instance each."""
    return [r.cells[distribution, policy] for r in results if (distribution, policy) in r.cells]


@dataclass(frozen=True)
class ProtocolRow:
    """One row of the table: a policy under a distribution, means over instances with 95 % intervals.

    Attributes
    ----------
    distribution, policy
        What the row is.
    instances
        Instances it averages over.
    figures
        Field of :class:`ProtocolCell` (``deviation``, ``bound_gap``, ``gap_high``, ``gap_low``) ->
        (mean, its bootstrap interval over instances or None).
    unsafe, negative
        Totals over the row's runs (both must be 0).
    """

    distribution: str
    policy: str
    instances: int
    figures: dict[str, tuple[float | None, Interval | None]]
    unsafe: int
    negative: int


#: The figures of a row, in the table's order.
PROTOCOL_FIGURES = ("deviation", "bound_gap", "gap_high", "gap_low")


def table_rows(
    results: Sequence[InstanceResult], distributions: Sequence[str] = LITERATURE_DISTRIBUTIONS
) -> list[ProtocolRow]:
    """The table: every distribution × policy, each figure's mean over instances and its interval."""
    rows = []
    for distribution in distributions:
        for policy in PROTOCOL_POLICIES:
            cells = cells_of(results, distribution, policy)
            if not cells:
                continue
            figures: dict[str, tuple[float | None, Interval | None]] = {}
            for name in PROTOCOL_FIGURES:
                values = [v for v in (getattr(c, name) for c in cells) if v is not None]
                mean = sum(values) / len(values) if values else None
                figures[name] = (mean, mean_interval(values))
            unsafe = sum(c.unsafe for c in cells)
            negative = sum(c.negative for c in cells)
            rows.append(ProtocolRow(distribution, policy, len(cells), figures, unsafe, negative))
    return rows


def percent_cell(figure: tuple[float | None, Interval | None], digits: int = 2) -> str:
    """A mean and its interval as percentages: ``12.34 [11.90, 12.80]``."""
    mean, interval = figure
    if mean is None:
        return "-"

    def shown(x: float) -> str:
        return f"{round(100 * x, digits) + 0.0:.{digits}f}"  # never -0.00

    return (
        shown(mean) if interval is None else f"{shown(mean)} [{shown(interval.low)}, {shown(interval.high)}]"
    )


def protocol_markdown(rows: Sequence[ProtocolRow]) -> str:
    """The table as Markdown (figures in %, 95 % bootstrap intervals over instances)."""
    lines = [
        "| distribution | policy | deviation from CPL (%) | gap to the realised bound (%) "
        "| gap to the scenario optimum, upper (%) | lower (%) | unsafe runs |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = " | ".join(percent_cell(row.figures[name]) for name in PROTOCOL_FIGURES)
        lines.append(f"| {row.distribution} | {row.policy} | {cells} | {row.unsafe} |")
    return "\n".join(lines)
