"""The vectorised realised scorer agrees with the exact oracle on every realised workflow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, varying_workflows

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.vector.realised import RealisedScorer


def check(workflow: Workflow, machine: Machine, starts: list[list[float]], noise: Noise | None) -> None:
    scenarios = draw(workflow, len(starts), seed=2, noise=noise)
    scores = RealisedScorer(workflow, machine).score(starts, scenarios.lengths, scenarios.scales)
    piecewise = any(t.profile is not None and len(t.profile) > 1 for t in workflow.tasks)
    for k, row in enumerate(starts):
        realised = scenarios.workflow(k)
        schedule = Schedule(workflow=workflow.id, starts=dict(zip(realised.index, row, strict=True)))
        exact = evaluate(realised, machine, schedule)
        assert scores.makespan[k] == pytest.approx(exact.makespan, rel=1e-9, abs=1e-9)
        assert scores.dependency_violations[k] == exact.dependency_violations
        if piecewise:  # inner boundaries move by up to half a grid step: figures close, not verdicts
            assert scores.avoidable_cva[k] == pytest.approx(exact.avoidable_cva, abs=1e-2)
            continue
        assert scores.avoidable_cva[k] == pytest.approx(exact.avoidable_cva, rel=1e-6, abs=1e-9)
        assert scores.cva[k] == pytest.approx(exact.cva, rel=1e-6, abs=1e-9)
        assert bool(scores.overflow[k]) == (exact.avoidable_cva > 0 or (not exact.safe and exact.valid))
        assert bool(scores.safe[k]) == exact.safe


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from([None, Noise(0.3, 0.4)]))
def test_agrees_with_the_exact_oracle(data: st.DataObject, noise: Noise | None) -> None:
    workflow = data.draw(varying_workflows(integer=data.draw(st.booleans())))
    machine = data.draw(machines())
    times = st.integers(0, 20).map(float) | st.floats(0, 20, allow_nan=False)
    starts = data.draw(
        st.lists(
            st.lists(times, min_size=len(workflow.tasks), max_size=len(workflow.tasks)),
            min_size=1,
            max_size=4,
        )
    )
    check(workflow, machine, starts, noise)


def test_an_over_capacity_step_alone_is_no_avoidable_overflow() -> None:
    big = Task(id="big", duration=2.0, demand={"cpu": 5.0})
    small = Task(id="small", duration=1.0, demand={"cpu": 1.0})
    workflow = Workflow(id="w", tasks=(big, small))
    machine = Machine(name="m", capacity={"cpu": 4.0})
    scorer = RealisedScorer(workflow, machine)
    apart = scorer.score([[0.0, 2.0]], [[2.0, 1.0]], [[1.0, 1.0]])
    assert apart.safe[0] and apart.avoidable_cva[0] == 0 and apart.cva[0] == pytest.approx(0.5)
    together = scorer.score([[0.0, 1.0]], [[2.0, 1.0]], [[1.0, 1.0]])
    assert together.overflow[0] and together.avoidable_cva[0] == pytest.approx(0.25)
    # the same plan, the second step's demand doubled by its scenario, the first's run stretched
    stretched = scorer.score([[0.0, 2.0]], [[2.5, 1.0]], [[1.0, 2.0]])
    assert stretched.overflow[0] and stretched.dependency_violations[0] == 0
