"""The exact evaluator on hand-computed cases."""

from __future__ import annotations

import pytest

from peakopt.instances import load
from peakopt.models import Machine, Schedule, SolveResult, Task, Workflow
from peakopt.oracle import evaluate, with_reference

REFUND = load("bundled:refund")
WORKFLOW, MACHINE = REFUND.workflows[0], REFUND.machines[0]
FOUR = ("lookup_order", "fraud_score", "history_scan", "policy_search")


def refund(**starts: float) -> Schedule:
    return Schedule(workflow="refund", machine="worker", starts=starts, source="test")


def test_refund_asap_by_hand() -> None:
    score = evaluate(WORKFLOW, MACHINE, refund(**dict.fromkeys(FOUR, 0.0), decide=4.8))
    # memory: 10240 MB over [0, 0.3), 9984 over [0.3, 1.5), 9216 over [1.5, 3.2), on 8192
    expected = (10240 - 8192) / 8192 * 0.3 + (9984 - 8192) / 8192 * 1.2 + (9216 - 8192) / 8192 * 1.7
    assert score.cva == pytest.approx(expected) == pytest.approx(0.55)
    assert score.cva_floor == 0 and score.avoidable_cva == pytest.approx(0.55)
    assert score.resources["memory_mb"].peak_ratio == pytest.approx(10240 / 8192)
    assert score.resources["cpu"].peak_ratio == pytest.approx(3.2 / 4)
    assert score.makespan == pytest.approx(5.4)
    assert score.valid and not score.safe
    assert score.strict_mru == 0 and score.safe_mru == 0 and score.mru > 0
    (overflow,) = score.violations
    assert overflow.message == "memory_mb 10240/8192 over [0.0, 3.2)"
    assert overflow.avoidable


def test_refund_staggered_is_safe() -> None:
    starts = dict.fromkeys(FOUR, 0.0) | {"history_scan": 4.8, "decide": 8.0}
    score = evaluate(WORKFLOW, MACHINE, refund(**starts))
    assert score.safe and score.cva == 0
    assert score.makespan == pytest.approx(8.6)
    assert score.strict_mru == score.mru == score.safe_mru


def test_invalid_schedule_reasons() -> None:
    score = evaluate(
        WORKFLOW, MACHINE, refund(lookup_order=-1, fraud_score=0, history_scan=4.8, decide=3, zz=1)
    )
    assert not score.valid and not score.safe
    assert score.reasons == [
        "task 'lookup_order' starts at -1.0, before 0",
        "task 'policy_search' has no start",
        "start given for unknown task 'zz'",
        "fraud_score -> decide: decide starts at 3.0 before fraud_score ends at 4.8",
        "history_scan -> decide: decide starts at 3.0 before history_scan ends at 8.0",
    ]
    assert score.dependency_violations == 2


def test_unavoidable_overload_and_piecewise() -> None:
    workflow = Workflow(
        id="w",
        tasks=[
            Task(
                id="big", profile=[{"duration": 1, "demand": {"m": 12}}, {"duration": 2, "demand": {"m": 4}}]
            ),
            Task(id="small", duration=2, demand={"m": 4}),
        ],
    )
    machine = Machine(name="x", capacity={"m": 8})
    serial = evaluate(workflow, machine, Schedule(workflow="w", starts={"big": 0, "small": 3}))
    assert serial.cva == pytest.approx(0.5) == serial.cva_floor
    assert serial.safe and serial.strict_mru == 0 and serial.safe_mru == serial.mru
    (overflow,) = serial.violations
    assert not overflow.avoidable
    together = evaluate(workflow, machine, Schedule(workflow="w", starts={"big": 0, "small": 0}))
    # [0,1): 16/8 -> 1.0 area; [1,2): 8/8 -> 0
    assert together.cva == pytest.approx(1.0)
    assert together.avoidable_cva == pytest.approx(0.5)
    assert together.violations[0].avoidable


def test_refund_asap_utilisation_by_hand() -> None:
    score = evaluate(WORKFLOW, MACHINE, refund(**dict.fromkeys(FOUR, 0.0), decide=4.8))
    # pieces [0,.3) [.3,1.5) [1.5,3.2) [3.2,4.8) [4.8,5.4): cpu 3.2, 3.0, 2.5, 1.5, 0.5 of 4;
    # memory 10240, 9984, 9216, 6144, 512 of 8192 (min(1, u) caps the first three at 1)
    cpu = 0.8 * 0.3 + 0.75 * 1.2 + 0.625 * 1.7 + 0.375 * 1.6 + 0.125 * 0.6
    memory = 0.3 + 1.2 + 1.7 + 0.75 * 1.6 + 512 / 8192 * 0.6
    assert score.mru == pytest.approx((cpu + memory) / 2 / 5.4)
    assert score.resources["memory_mb"].violation_area == pytest.approx(0.55)
    assert score.resources["cpu"].violation_area == 0
    assert score.cva_floor == 0  # every step fits the worker on its own


def test_refund_asap_gap_against_the_optimum() -> None:
    optimum = SolveResult(
        workflow="refund", machine="worker", status="optimal", makespan=8.6, lower_bound=8.6
    )
    score = with_reference(
        evaluate(WORKFLOW, MACHINE, refund(**dict.fromkeys(FOUR, 0.0), decide=4.8)), optimum
    )
    # 5.4 s is faster than the optimum because it overflows: unsafe, so no (negative) gap
    assert score.makespan == pytest.approx(5.4) and not score.safe and score.gap is None


CPU = Machine(name="m", capacity={"cpu": 1})


def _steps(**durations: float) -> Workflow:
    """Independent steps that each need the whole cpu."""
    return Workflow(id="w", tasks=[Task(id=t, duration=d, demand={"cpu": 1}) for t, d in durations.items()])


@pytest.mark.parametrize("third", [0.3, 0.1 + 0.2])
def test_back_to_back_steps_from_decimal_sums_overlap_nothing(third: float) -> None:
    # b ends at 0.1 + 0.2 = 0.3 exactly; c starts at 0.3 or at the float sum 0.30000000000000004
    score = evaluate(
        _steps(a=0.1, b=0.2, c=0.3), CPU, Schedule(workflow="w", starts={"a": 0, "b": 0.1, "c": third})
    )
    assert score.cva == 0 and score.avoidable_cva == 0 and score.safe
    assert score.violations == ()  # not "cpu 2/1 over [0.3, 0.3)"
    assert score.resources["cpu"].peak_ratio == 1.0
    assert score.strict_mru == score.mru == pytest.approx(1.0, rel=1e-12)  # (a 4e-17 s gap at most)
    assert score.makespan == pytest.approx(0.6, rel=1e-12)


def test_a_start_summed_just_below_the_decimal_end_follows_it() -> None:
    # b starts at 0.7 + 0.1 = 0.7999999999999999, a step that ends at 0.8 before it
    workflow = Workflow(
        id="w",
        tasks=[
            Task(id="a", duration=0.7, demand={"cpu": 1}),
            Task(id="x", duration=0.1, demand={"cpu": 1}, depends_on=["a"]),
            Task(id="b", duration=0.2, demand={"cpu": 1}, depends_on=["x"]),
        ],
    )
    score = evaluate(workflow, CPU, Schedule(workflow="w", starts={"a": 0, "x": 0.7, "b": 0.7 + 0.1}))
    assert score.valid and score.safe and score.cva == 0 and score.violations == ()


def test_loads_summing_to_the_capacity_in_decimals_are_at_capacity() -> None:
    workflow = Workflow(
        id="w",
        tasks=[Task(id="a", duration=1, demand={"cpu": 0.1}), Task(id="b", duration=1, demand={"cpu": 0.2})],
    )
    score = evaluate(
        workflow, Machine(name="m", capacity={"cpu": 0.3}), Schedule(workflow="w", starts={"a": 0, "b": 0})
    )
    assert score.cva == 0 and score.strict_mru == score.mru == 1.0
    assert score.resources["cpu"].peak == 0.3  # not 0.30000000000000004


@pytest.mark.parametrize("at", [0.0, 1e7 - 1])
def test_a_ten_millisecond_double_overload_is_unsafe_however_long_the_schedule(at: float) -> None:
    workflow = Workflow(
        id="w",
        tasks=[
            Task(id="a", duration=0.01, demand={"cpu": 1}),
            Task(id="b", duration=0.01, demand={"cpu": 1}),
            Task(id="long", duration=1e7),
        ],
    )
    score = evaluate(workflow, CPU, Schedule(workflow="w", starts={"a": at, "b": at, "long": 0}))
    assert not score.safe and score.avoidable_cva == pytest.approx(0.01, rel=1e-12)
    assert score.strict_mru == 0 and score.safe_mru == 0
    (overflow,) = score.violations
    assert overflow.avoidable and overflow.message == f"cpu 2/1 over [{at!r}, {at + 0.01!r})"


@pytest.mark.parametrize("unit", [1.0, 1e6], ids=["seconds", "microseconds"])
def test_a_short_overlap_gets_one_verdict_in_seconds_and_microseconds(unit: float) -> None:
    # a 0.5 ns overlap in a 1 ms schedule: today safe in seconds (1e-9 · max(1, span)), unsafe in µs
    workflow = _steps(a=1e-3 * unit, b=1e-3 * unit)
    starts = {"a": 0.0, "b": (1e-3 - 5e-10) * unit}
    score = evaluate(workflow, CPU, Schedule(workflow="w", starts=starts))
    assert not score.safe and score.avoidable_cva == pytest.approx(5e-10 * unit, rel=1e-6)


def test_mru_at_makespan_zero_is_undefined() -> None:
    workflow = Workflow(id="w", tasks=[Task(id="a", duration=0, demand={"cpu": 1}), Task(id="b", duration=0)])
    score = evaluate(workflow, CPU, Schedule(workflow="w", starts={"a": 0, "b": 0}))
    assert score.valid and score.safe and score.makespan == 0
    assert score.mru is None and score.strict_mru is None and score.safe_mru is None
    unsafe = evaluate(workflow, CPU, Schedule(workflow="w", starts={"a": 0}))  # b has no start
    assert unsafe.mru is None and unsafe.safe_mru == 0.0  # unsafe earns nothing, defined or not


def test_mru_with_a_negative_start_spans_from_that_start() -> None:
    score = evaluate(_steps(a=2.0), CPU, Schedule(workflow="w", starts={"a": -1.0}))
    assert not score.valid and score.makespan == 1.0
    assert score.mru == 1.0  # busy over its whole span [-1, 1), not 2 s of use in a 1 s makespan
    assert score.safe_mru == 0.0


def test_a_ratio_past_the_float_range_is_infinite_not_a_crash() -> None:
    workflow = Workflow(id="w", tasks=[Task(id="a", duration=1, demand={"cpu": 1e300})])
    score = evaluate(
        workflow, Machine(name="m", capacity={"cpu": 1e-300}), Schedule(workflow="w", starts={"a": 0})
    )
    assert score.safe and score.resources["cpu"].peak_ratio == float("inf") and score.cva == float("inf")
