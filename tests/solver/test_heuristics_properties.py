"""Every heuristic on random workflows, judged by the oracle (never by the heuristic)."""

from __future__ import annotations

import math

import pytest
from heuristics_helpers import BLIND, PARAMETRISED, critical_path, judged, most_in_flight
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, workflows

from peakopt.models import Machine, Workflow
from peakopt.oracle import TOLERANCE
from peakopt.solver.heuristics import best_schedule, method_names, parse_method, run
from peakopt.solver.heuristics.portfolio import FAST

CHEAP = [m for m in method_names() if m != "best:thorough"] + list(PARAMETRISED)


@pytest.mark.slow
@given(workflow=workflows(), machine=machines())
def test_every_method_is_valid_and_every_resource_aware_one_is_safe(
    workflow: Workflow, machine: Machine
) -> None:
    for name in CHEAP:
        schedule = run(workflow, machine, name)
        assert schedule.source == name
        assert schedule.machine == machine.name
        score = judged(workflow, machine, schedule)
        if name not in BLIND:
            assert score.safe, (name, score.avoidable_cva, [v.message for v in score.violations])
        assert score.makespan >= critical_path(workflow) * (1 - TOLERANCE) - TOLERANCE


@pytest.mark.slow
@settings(max_examples=20)
@given(workflow=workflows(), machine=machines(), seed=st.integers(0, 2**32))
def test_thorough_portfolio_is_safe_and_no_worse_than_fast(
    workflow: Workflow, machine: Machine, seed: int
) -> None:
    fast = judged(workflow, machine, best_schedule(workflow, machine))
    thorough = judged(workflow, machine, best_schedule(workflow, machine, seed=seed, effort="thorough"))
    assert fast.safe and thorough.safe
    assert thorough.makespan <= fast.makespan + 1e-9 * max(1.0, fast.makespan)


@pytest.mark.slow
@given(workflow=workflows(integer=True), machine=machines(integer=True))
def test_integer_data_is_scheduled_on_integer_times(workflow: Workflow, machine: Machine) -> None:
    for name in ("sgs:serial:lft", "fbi:sgs:parallel:grpw", "admission", "fbi:sampling:3"):
        schedule = run(workflow, machine, name)
        assert all(float(s).is_integer() for s in schedule.starts.values())
        assert judged(workflow, machine, schedule).safe


@pytest.mark.slow
@given(workflow=workflows(), machine=machines())
def test_improvement_and_portfolios_never_lengthen(workflow: Workflow, machine: Machine) -> None:
    def span(name: str) -> float:
        return judged(workflow, machine, run(workflow, machine, name)).makespan

    slack = 1e-9 * max(1.0, span("serial"))
    for scheme in ("serial", "parallel"):
        for rule in ("lft", "grpw", "nrp"):
            assert span(f"fbi:sgs:{scheme}:{rule}") <= span(f"sgs:{scheme}:{rule}") + slack
            assert span("best-rule") <= span(f"sgs:{scheme}:{rule}") + slack
    for scheme, rule in FAST:  # the fast portfolio's members
        assert span("best:fast") <= span(f"fbi:sgs:{scheme}:{rule}") + slack
    assert span("fbi:best-rule") <= span("best-rule") + slack
    assert span("sampling:5") <= span("sgs:serial:lft") + slack  # its first pass is the rule's own


@pytest.mark.slow
@given(workflow=workflows())
def test_blind_baselines_need_no_machine(workflow: Workflow) -> None:
    lengths = math.fsum(t.length for t in workflow.tasks)
    limitless = Machine(name="limitless", capacity={"nothing": 1.0})
    asap = run(workflow, None, "asap")
    serial = run(workflow, None, "serial")
    assert asap.machine is None
    assert judged(workflow, limitless, asap).makespan == pytest.approx(critical_path(workflow))
    assert judged(workflow, limitless, serial).makespan == pytest.approx(lengths)
    portfolio = best_schedule(workflow, None)
    assert judged(workflow, limitless, portfolio).makespan == pytest.approx(critical_path(workflow))
    assert most_in_flight(workflow, serial.starts) <= 1
    for limit in (1, 2, 3):
        capped = run(workflow, None, f"cap:{limit}")
        judged(workflow, limitless, capped)
        assert most_in_flight(workflow, capped.starts) <= limit


@given(workflow=workflows(), machine=machines(), seed=st.integers(0, 2**32))
def test_seeded_methods_are_reproducible(workflow: Workflow, machine: Machine, seed: int) -> None:
    for name in (
        "sgs:serial:random",
        "sgs:parallel:random",
        "fbi:sgs:serial:random",
        "sampling:6",
        "fbi:sampling:4",
    ):
        assert parse_method(name).seeded
        first = run(workflow, machine, name, seed=seed)
        again = run(workflow, machine, name, seed=seed)
        assert first.starts == again.starts
