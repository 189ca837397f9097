"""Monte Carlo scoring: a plan executed over sampled scenarios, figures as the oracle defines them.

The execution policies here are tiny local stand-ins with the simulator's ``run`` interface
(``literal``: the plan as a timetable; ``enforced``: not before the predecessors end), so these
tests judge the Monte Carlo layer alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, varying_workflows

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.tables.aggregate import aggregate
from peakopt.oracle.tables.montecarlo import monte_carlo, run_scenarios, summarise_runs, unscored
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.vector.realised import RealisedScores


class Timetable:
    """Stand-in for ``Simulation(..., "literal" | "enforced", plan)``."""

    def __init__(self, workflow: Workflow, starts: Sequence[float], enforce: bool) -> None:
        self.workflow, self.starts, self.enforce = workflow, list(starts), enforce

    def run(self, lengths: Sequence[float], scales: Sequence[float] | None = None) -> list[float]:
        starts = list(self.starts)
        if self.enforce:
            for j in self.workflow.topological_order:
                ready = max((starts[p] + lengths[p] for p in self.workflow.predecessors[j]), default=0.0)
                starts[j] = max(starts[j], ready)
        return starts


def chain() -> tuple[Workflow, Machine]:
    a = Task(id="a", duration=2.0, demand={"cpu": 2.0})
    b = Task(id="b", duration=2.0, demand={"cpu": 2.0}, depends_on=("a",))
    c = Task(id="c", duration=1.0, demand={"cpu": 2.0})
    return Workflow(id="w", tasks=(a, b, c)), Machine(name="m", capacity={"cpu": 4.0})


def test_literal_breaks_dependencies_enforced_does_not() -> None:
    workflow, machine = chain()
    plan = [0.0, 2.0, 0.0]  # the optimum at nominal durations: b right after a
    scenarios = draw(workflow, 400, seed=0, noise=Noise(duration=0.1))
    literal = monte_carlo(workflow, machine, Timetable(workflow, plan, False), scenarios, execution="literal")
    enforced = monte_carlo(
        workflow, machine, Timetable(workflow, plan, True), scenarios, execution="enforced"
    )
    # a runs long in about half the scenarios, and then b starts before a ends
    assert 0.4 < literal.violation_rate < 0.6
    assert enforced.violation_rate == 0.0 and enforced.safe_rate == 1.0
    assert literal.safe_rate == pytest.approx(1 - literal.violation_rate)
    # b waits for its planned start when a ends early: E[max(2, a)] + E[b] = 2.05 + 2
    assert enforced.mean_makespan == pytest.approx(4.05, abs=0.02)
    assert enforced.p95_makespan > enforced.mean_makespan
    assert (literal.samples, literal.seed, literal.noise_duration, literal.noise_demand) == (400, 0, 0.1, 0.0)


def test_overflow_probability_under_demand_noise() -> None:
    workflow, machine = chain()
    # a and c together hold exactly the capacity: any demand above nominal overflows
    scenarios = draw(workflow, 400, noise=Noise(demand=0.2))
    figures = monte_carlo(
        workflow, machine, Timetable(workflow, [0.0, 2.0, 0.0], True), scenarios, execution="enforced"
    )
    # the sum of two multipliers uniform in [0.8, 1.2] exceeds 2 half of the time
    assert 0.4 < figures.overflow_rate < 0.6
    assert figures.mean_avoidable_cva > 0
    assert figures.safe_rate == pytest.approx(1 - figures.overflow_rate)


def test_gap_and_efficiency_against_the_perfect_information_bound() -> None:
    workflow, machine = chain()
    scenarios = draw(workflow, 50, noise=Noise(duration=0.2))
    runner = Timetable(workflow, [0.0, 2.0, 0.0], True)
    runs = run_scenarios(workflow, machine, runner, scenarios)
    # as if each scenario's optimum were 90 % of the makespan reached: gap 1/9, efficiency 0.9
    optima = [0.9 * m for m in runs.scores.makespan.tolist()]
    figures = monte_carlo(workflow, machine, runner, scenarios, execution="enforced", optima=optima)
    assert figures.bounded == 50
    assert figures.gap == pytest.approx(1 / 9) and figures.efficiency == pytest.approx(0.9)
    partial = monte_carlo(workflow, machine, runner, scenarios, execution="enforced", optima=[None] * 50)
    assert partial.bounded == 0 and partial.gap is None
    with pytest.raises(ValueError, match="one per scenario"):
        monte_carlo(workflow, machine, runner, scenarios, execution="enforced", optima=[1.0])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_figures_are_the_exact_oracle_s_over_the_realised_workflows(data: st.DataObject) -> None:
    workflow = data.draw(varying_workflows(piecewise=False))
    machine = data.draw(machines())
    plan = [float(data.draw(st.integers(0, 10))) for _ in workflow.tasks]
    enforce = data.draw(st.booleans())
    scenarios = draw(workflow, 12, seed=data.draw(st.integers(0, 5)))
    figures = monte_carlo(workflow, machine, Timetable(workflow, plan, enforce), scenarios, execution="x")
    exact = []
    for k in range(len(scenarios)):
        starts = Timetable(workflow, plan, enforce).run(scenarios.lengths[k], scenarios.scales[k])
        schedule = Schedule(workflow=workflow.id, starts=dict(zip(workflow.index, starts, strict=True)))
        exact.append(evaluate(scenarios.workflow(k), machine, schedule))
    assert figures.safe_rate == pytest.approx(np.mean([s.safe for s in exact]))
    assert figures.violation_rate == pytest.approx(np.mean([s.dependency_violations > 0 for s in exact]))
    assert figures.mean_makespan == pytest.approx(np.mean([s.makespan for s in exact]))
    assert figures.mean_avoidable_cva == pytest.approx(np.mean([s.avoidable_cva for s in exact]), abs=1e-9)


def test_aggregates_average_records_and_keep_deterministic_output() -> None:
    workflow, machine = chain()
    scenarios = draw(workflow, 100, noise=Noise(duration=0.1))
    literal = monte_carlo(
        workflow, machine, Timetable(workflow, [0.0, 2.0, 0.0], False), scenarios, execution="literal"
    )
    rows = [
        ScoreRow(valid=True, source="a", monte_carlo=literal),
        ScoreRow(valid=True, source="a", monte_carlo=literal.model_copy(update={"safe_rate": 1.0})),
        ScoreRow(valid=False, source="a", monte_carlo=unscored("literal", 100, 0, Noise(0.1), "no plan")),
    ]
    (summary,) = aggregate(rows, intervals=True)
    assert summary.monte_carlo is not None
    assert summary.monte_carlo.records == 3 and summary.monte_carlo.samples == 300
    assert summary.monte_carlo.safe_rate == pytest.approx((literal.safe_rate + 1.0 + 0.0) / 3)
    assert summary.monte_carlo.mean_makespan == pytest.approx(literal.mean_makespan)
    assert "mc_safe_rate" in summary.intervals
    plain = aggregate([ScoreRow(valid=True, source="a")], intervals=True)[0]
    assert plain.monte_carlo is None and "monte_carlo" not in plain.model_dump()
    assert "monte_carlo" not in ScoreRow(valid=True).model_dump_json()
    assert ScoreRow.model_validate_json(rows[0].model_dump_json()) == rows[0]


def synthetic(makespans: Sequence[float]) -> RealisedScores:
    """Scores of safe runs with these makespans (nothing else measured)."""
    size, span = len(makespans), np.array(makespans, dtype=float)
    zeros, no = np.zeros(size), np.zeros(size, dtype=bool)
    return RealisedScores(
        makespan=span,
        cva=zeros,
        avoidable_cva=zeros,
        overflow=no,
        dependency_violations=np.zeros(size, dtype=np.int64),
        safe=np.ones(size, dtype=bool),
        slowed_makespan=span,
        soft_overflow=no,
    )


#: Optima that are a makespan itself for the judge, reached by other float sums or a few ulps off.
MET: dict[str, Callable[[float], float]] = {
    "next-up": lambda m: float(np.nextafter(m, np.inf)),
    "next-down": lambda m: float(np.nextafter(m, -np.inf)),
    "ulps-down": lambda m: m * (1 - 64 * 2.0**-52),
    "ulps-up": lambda m: m * (1 + 64 * 2.0**-52),
    "tenths": lambda m: sum([m / 10] * 10),
}


@pytest.mark.parametrize("magnitude", [1e-6, 0.3, 1.0, 7.3, 1e6, 1e12])
@pytest.mark.parametrize("how", list(MET))
def test_a_makespan_at_its_optimum_has_gap_zero_and_efficiency_one(magnitude: float, how: str) -> None:
    workflow, _ = chain()
    scenarios = draw(workflow, 3)
    makespans = [magnitude, magnitude, magnitude]
    optima = [MET[how](magnitude), magnitude, MET[how](magnitude)]
    figures = summarise_runs(synthetic(makespans), scenarios, "online", optima)
    assert figures.gap == 0.0 and figures.efficiency == 1.0, (figures.gap, figures.efficiency)


@pytest.mark.parametrize("magnitude", [1e-6, 1.0, 1e12])
def test_a_makespan_really_above_its_optimum_keeps_its_gap(magnitude: float) -> None:
    workflow, _ = chain()
    figures = summarise_runs(synthetic([magnitude]), draw(workflow, 1), "online", [magnitude * (1 - 1e-9)])
    assert figures.gap == pytest.approx(1e-9, rel=1e-3) and figures.efficiency == pytest.approx(1 - 1e-9)
