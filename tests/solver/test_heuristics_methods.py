"""Method names, runtime policies, piecewise profiles and over-capacity steps."""

from __future__ import annotations

import pytest
from heuristics_helpers import judged, phases, task
from paths import J30, PATTERSON, j30_optima, patterson_optima

from peakopt.instances import load
from peakopt.models import Machine, Segment, Task, Workflow
from peakopt.solver.heuristics import (
    METHOD_PATTERNS,
    MachineNeeded,
    MethodError,
    best_schedule,
    compile_problem,
    method_names,
    parse_method,
    run,
)

MEMORY = Machine(name="m", capacity={"memory_mb": 8})


@pytest.mark.parametrize(
    "name",
    [
        "cap:0",
        "cap:x",
        "cap:",
        "asap:1",
        "sgs:diagonal:lft",
        "sgs:serial:fastest",
        "sgs:serial",
        "sampling:0",
        "sampling:ten",
        "sampling:5:random",
        "fbi:asap",
        "fbi:",
        "best-rule:lft",
        "admission:lax",
        "best:slow",
        "nonsense",
    ],
)
def test_malformed_or_unknown_names_are_method_errors(name: str) -> None:
    with pytest.raises(MethodError, match="method"):
        parse_method(name)


def test_catalogue_names_parse_and_patterns_are_listed() -> None:
    names = method_names()
    assert len(names) == len(set(names))
    assert {"asap", "serial", "sgs:parallel:lft", "fbi:sgs:parallel:lft", "best-rule", "admission"} <= set(
        names
    )
    assert all(parse_method(n).name == n for n in names)
    assert "cap:K" in METHOD_PATTERNS
    workflow = Workflow(id="w", tasks=(task("a", 1, memory_mb=6), task("b", 1, memory_mb=6)))
    alias = run(workflow, MEMORY, "best")
    assert alias.source == "best" and alias.starts == run(workflow, MEMORY, "best:fast").starts


def test_resource_aware_methods_need_a_machine() -> None:
    workflow = Workflow(id="w", tasks=(task("a", 1, memory_mb=1),))
    assert not parse_method("cap:2").resource_aware
    for name in ("sgs:serial:lft", "admission", "best-rule", "best:fast"):
        assert parse_method(name).resource_aware
        with pytest.raises(MachineNeeded, match=f"'{name}' is resource-aware"):
            run(workflow, None, name)


def test_admission_greedy_lets_a_small_step_pass_strict_does_not() -> None:
    workflow = Workflow(
        id="w",
        tasks=(task("big1", 2, memory_mb=6), task("big2", 2, memory_mb=6), task("small", 1, memory_mb=1)),
    )
    greedy = run(workflow, MEMORY, "admission")
    strict = run(workflow, MEMORY, "admission:strict")
    assert greedy.starts == {"big1": 0.0, "big2": 2.0, "small": 0.0}
    assert strict.starts == {"big1": 0.0, "big2": 2.0, "small": 2.0}
    assert judged(workflow, MEMORY, greedy).safe and judged(workflow, MEMORY, strict).safe


def test_admission_holds_the_peak_while_planners_use_the_profile() -> None:
    workflow = Workflow(id="w", tasks=(phases("load", (1, 6), (4, 2)), task("scan", 3, memory_mb=6)))
    planned = run(workflow, MEMORY, "sgs:serial:lft")
    admitted = run(workflow, MEMORY, "admission")
    assert judged(workflow, MEMORY, planned).makespan == 5  # scan starts once the spike is over
    assert planned.starts["scan"] == 1
    assert judged(workflow, MEMORY, admitted).makespan == 8  # the semaphore holds 6 for all 5 s
    assert judged(workflow, MEMORY, planned).safe and judged(workflow, MEMORY, admitted).safe


def test_a_later_spike_blocks_an_earlier_start() -> None:
    workflow = Workflow(id="w", tasks=(phases("late", (2, 1), (2, 7)), task("mid", 3, memory_mb=6)))
    for rule in ("lft", "spt", "fifo"):
        for scheme in ("serial", "parallel"):
            schedule = run(workflow, MEMORY, f"sgs:{scheme}:{rule}")
            assert judged(workflow, MEMORY, schedule).safe


def test_over_capacity_step_runs_alone_on_that_resource() -> None:
    workflow = Workflow(
        id="w",
        tasks=(task("huge", 2, memory_mb=10, cpu=1), task("a", 3, memory_mb=1), task("cpu_only", 2, cpu=1)),
    )
    machine = Machine(name="m", capacity={"memory_mb": 8, "cpu": 4})
    for name in ("fbi:sgs:parallel:lft", "sgs:serial:spt", "admission", "best:fast", "fbi:sampling:10"):
        schedule = run(workflow, machine, name)
        score = judged(workflow, machine, schedule)
        assert score.safe and score.cva == pytest.approx(score.cva_floor) and score.cva_floor > 0
        huge, other = schedule.starts["huge"], schedule.starts["a"]
        assert other >= huge + 2 or huge >= other + 3
        assert score.makespan == 5  # cpu_only may overlap the huge step


def test_clamped_demands_and_reverse_profiles_in_the_arrays() -> None:
    spike = Task(
        id="s",
        profile=(Segment(duration=1, demand={"m": 20}), Segment(duration=3, demand={"m": 2, "free": 9})),
    )
    problem = compile_problem(Workflow(id="w", tasks=(spike,)), Machine(name="x", capacity={"m": 8}))
    assert problem.resources == ("m",)
    assert problem.length == (4.0,)
    ((first, second),) = problem.blocks
    assert first[:2] == (0.0, 1.0) and first[2][0][:2] == (0, 8.0)
    assert second[:2] == (1.0, 3.0) and second[2][0][:2] == (0, 2.0)
    ((back_first, back_second),) = problem.reverse.blocks
    assert back_first[:2] == (0.0, 3.0) and back_second[:2] == (3.0, 1.0)
    ((peak,),) = problem.peak  # one task, one resource
    assert peak[:2] == (0, 8.0) and peak[2] == pytest.approx(8.0)


@pytest.mark.parametrize("name", ["j301_1", "j3013_2", "j3029_3", "j3048_10"])
def test_j30_heuristics_are_safe_and_no_better_than_the_optimum(name: str) -> None:
    suite = load(J30 / f"{name}.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    optimum = j30_optima()[name]
    for method in ("sgs:serial:lft", "fbi:sgs:parallel:lft", "best-rule", "admission", "fbi:sampling:20"):
        score = judged(workflow, machine, run(workflow, machine, method))
        assert score.safe and score.cva == 0
        assert optimum <= score.makespan <= 1.5 * optimum
    best = judged(workflow, machine, best_schedule(workflow, machine))
    assert best.safe and optimum <= best.makespan <= 1.15 * optimum


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pat1", "pat7", "pat50"])
def test_patterson_instances_are_safe(name: str) -> None:
    suite = load(PATTERSON / f"{name}.rcp")
    workflow, machine = suite.workflows[0], suite.machines[0]
    score = judged(workflow, machine, best_schedule(workflow, machine, effort="thorough"))
    assert score.safe
    assert patterson_optima()[name] <= score.makespan <= 1.1 * patterson_optima()[name]


def test_random_rule_depends_on_the_seed() -> None:
    suite = load(J30 / "j3013_2.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    starts = {
        tuple(sorted(run(workflow, machine, "sgs:serial:random", seed=s).starts.items())) for s in range(6)
    }
    assert len(starts) > 1
