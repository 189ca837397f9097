"""The vectorised copies (peakopt.oracle.vector) give the judge's numbers: the one module holding that.

The batch scorer on many schedules of one workflow, the realised scorer on many realisations
of it, each checked against :func:`peakopt.oracle.evaluate` on every row.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_helpers import scaled, shifted, valid_schedules
from strategies import machines, schedules, varying_workflows, workflows

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.vector.batch import BatchScorer, score_batch
from peakopt.oracle.vector.realised import RealisedScorer

#: pytest.approx to 1e-9, relative or absolute
close = partial(pytest.approx, rel=1e-9, abs=1e-9)


def assert_same(workflow: Workflow, machine: Machine, batch: list[Schedule]) -> None:
    scorer = BatchScorer(workflow, machine)
    scores = scorer.score(scorer.matrix(s.starts for s in batch))
    for row, schedule in enumerate(batch):
        exact = evaluate(workflow, machine, schedule)
        assert bool(scores.valid[row]) == exact.valid
        assert bool(scores.safe[row]) == exact.safe
        assert int(scores.dependency_violations[row]) == exact.dependency_violations
        for name in ("makespan", "cva", "cva_floor", "avoidable_cva", "mru", "strict_mru", "safe_mru"):
            expected = getattr(exact, name)
            got = getattr(scores, name)[row]
            if expected is None:  # an undefined MRU is NaN in the batch
                assert np.isnan(got), name
            else:
                assert got == close(expected), name
        for column, resource in enumerate(scores.resources):
            figures = exact.resources[resource]
            assert scores.peak[row, column] == close(figures.peak)
            assert scores.peak_ratio[row, column] == close(figures.peak_ratio)
            assert scores.violation_area[row, column] == close(figures.violation_area)


@pytest.mark.slow
@given(st.data())
def test_batch_equals_exact_on_random_schedules(data: st.DataObject) -> None:
    workflow = data.draw(workflows(piecewise=True))
    machine = data.draw(machines())
    batch = data.draw(
        st.lists(st.one_of(schedules(workflow), valid_schedules(workflow)), min_size=1, max_size=6)
    )
    assert_same(workflow, machine, batch)


@pytest.mark.slow
@given(st.data())
def test_batch_equals_exact_with_missing_starts(data: st.DataObject) -> None:
    workflow = data.draw(workflows())
    machine = data.draw(machines())
    full = data.draw(schedules(workflow))
    kept = data.draw(st.sets(st.sampled_from(sorted(full.starts))))
    partial = Schedule(workflow=workflow.id, starts={t: s for t, s in full.starts.items() if t in kept})
    assert_same(workflow, machine, [partial, full])


def test_refund_batch_by_hand() -> None:
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    # columns: lookup_order, fraud_score, history_scan, policy_search, decide
    scores = score_batch(workflow, machine, [[0, 0, 0, 0, 4.8], [0, 0, 4.8, 0, 8.0], [0, 0, 4.8, 0, 1.0]])
    assert scores.cva == pytest.approx([0.55, 0.0, 0.0])
    assert scores.makespan == pytest.approx([5.4, 8.6, 8.0])
    assert scores.safe.tolist() == [False, True, False]
    assert scores.valid.tolist() == [True, True, False]
    assert scores.dependency_violations.tolist() == [0, 0, 3]  # fraud, history, policy end after 1.0
    assert scores.peak_ratio[0, scores.resources.index("memory_mb")] == pytest.approx(10240 / 8192)


def test_batch_rejects_a_wrong_shape_and_handles_no_rows() -> None:
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    with pytest.raises(ValueError, match="shape"):
        score_batch(workflow, machine, np.zeros((2, 4)))
    assert score_batch(workflow, machine, np.zeros((0, 5))).cva.shape == (0,)


def test_batch_spans_several_chunks() -> None:
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    rng = np.random.default_rng(7)
    starts = rng.uniform(0, 10, size=(9000, 5))
    scores = score_batch(workflow, machine, starts)
    for row in (0, 4096, 8999):
        exact = evaluate(
            workflow,
            machine,
            Schedule(workflow="refund", starts=dict(zip(workflow.index, starts[row], strict=True))),
        )
        assert scores.cva[row] == close(exact.cva)
        assert scores.mru[row] == close(exact.mru)


@pytest.mark.slow
@given(st.data(), st.tuples(st.integers(1, 999), st.integers(-6, 7)), st.integers(-6, 6))
def test_batch_equals_exact_on_decimal_data_at_every_magnitude(
    data: st.DataObject, time: tuple[int, int], demand: int
) -> None:
    base = data.draw(workflows(max_tasks=6, integer=True, piecewise=True))
    workflow, machine = scaled(base, data.draw(machines(integer=True)), time, demand)
    drawn = data.draw(
        st.lists(
            st.one_of(schedules(base, integer=True), valid_schedules(base, integer=True)),
            min_size=1,
            max_size=4,
        )
    )
    batch = [
        Schedule(workflow="w", starts={t: shifted(s * time[0], time[1]) for t, s in d.starts.items()})
        for d in drawn
    ]
    assert_same(workflow, machine, batch)


def _steps(*durations: float) -> Workflow:
    return Workflow(
        id="w", tasks=[Task(id=f"t{i}", duration=d, demand={"cpu": 1}) for i, d in enumerate(durations)]
    )


@pytest.mark.parametrize(
    ("workflow", "starts"),
    [
        (_steps(0.1, 0.2, 0.3), [0, 0.1, 0.3]),  # back to back through a decimal sum
        (_steps(0.1, 0.2, 0.3), [0, 0.1, 0.1 + 0.2]),
        (_steps(0.01, 0.01, 1e7), [0, 0, 1e7]),  # a 10 ms double overload
        (_steps(0.01, 0.01, 1e7), [1e7 - 1, 1e7 - 1, 1e7 + 1]),
        (_steps(1e-3, 1e-3), [0, 1e-3 - 5e-10]),  # half a nanosecond in a millisecond
        (_steps(1e3, 1e3), [0, 1e3 - 5e-4]),  # the same in microseconds
    ],
)
def test_batch_and_exact_agree_on_float_noise_and_short_overloads(
    workflow: Workflow, starts: list[float]
) -> None:
    machine = Machine(name="m", capacity={"cpu": 1})
    assert_same(
        workflow, machine, [Schedule(workflow="w", starts=dict(zip(workflow.index, starts, strict=True)))]
    )


# the realised scorer: many realisations of one workflow


def assert_same_realised(
    workflow: Workflow, machine: Machine, starts: list[list[float]], noise: Noise | None
) -> None:
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
def test_realised_equals_exact_on_every_realised_workflow(data: st.DataObject, noise: Noise | None) -> None:
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
    assert_same_realised(workflow, machine, starts, noise)


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


@pytest.mark.parametrize("length", [5e-324, 1e-321, 1e-310])
def test_the_batch_compares_subnormal_instants_as_the_judge(length: float) -> None:
    workflow = Workflow(
        id="w", tasks=(Task(id="a", duration=length), Task(id="b", duration=0.0, depends_on=("a",)))
    )
    machine = Machine(name="m", capacity={"cpu": 1.0})
    starts = [{"a": 0.0, "b": 0.0}, {"a": 0.0, "b": length}]
    assert_same(workflow, machine, [Schedule(workflow="w", machine="m", starts=s) for s in starts])
    realised = RealisedScorer(workflow, machine).score(
        [[s["a"], s["b"]] for s in starts], [[length, 0.0]] * 2, [[1.0, 1.0]] * 2
    )
    exact = [evaluate(workflow, machine, Schedule(workflow="w", machine="m", starts=s)) for s in starts]
    assert [int(v) for v in realised.dependency_violations] == [e.dependency_violations for e in exact]
