"""Heuristics throughput (pytest-benchmark, one core); the oracle judges every result after timing."""

from __future__ import annotations

import random
from typing import Any

import pytest
from heuristics_workloads import WORKER, agent_workflows
from paths import J30, j30_optima

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.solver.heuristics import Problem, best_schedule, compile_problem
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.portfolio import to_schedule
from peakopt.solver.heuristics.rules import latest_finish
from peakopt.solver.heuristics.sampling import sample
from peakopt.solver.heuristics.sgs import parallel_sgs, priority_order, serial_sgs

INSTANCES = ("j301_1", "j3013_2", "j3029_3")


def j30(name: str) -> tuple[Workflow, Machine, Problem]:
    suite = load(J30 / f"{name}.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    return workflow, machine, compile_problem(workflow, machine)


def check(workflow: Workflow, machine: Machine, problem: Problem, start: list[float], name: str) -> float:
    score = evaluate(workflow, machine, to_schedule(problem, start, "benchmark"))
    assert score.safe and score.valid
    assert score.makespan >= j30_optima()[name]
    return score.makespan


def per_second(benchmark: Any) -> float:
    rate: float = 1.0 / benchmark.stats.stats.median
    benchmark.extra_info["schedules_per_second"] = round(rate)
    return rate


@pytest.mark.parametrize("name", INSTANCES)
def test_serial_sgs_pass_on_j30(benchmark: Any, name: str) -> None:
    workflow, machine, problem = j30(name)
    keys = latest_finish(problem)
    start = benchmark(lambda: serial_sgs(problem, priority_order(problem, keys)))
    check(workflow, machine, problem, start, name)
    assert per_second(benchmark) >= 5000  # the target, with the priority list built in each pass


@pytest.mark.parametrize("name", INSTANCES)
def test_parallel_sgs_pass_on_j30(benchmark: Any, name: str) -> None:
    workflow, machine, problem = j30(name)
    keys = latest_finish(problem)
    start = benchmark(lambda: parallel_sgs(problem, keys))
    check(workflow, machine, problem, start, name)
    per_second(benchmark)


@pytest.mark.parametrize("name", INSTANCES)
def test_forward_backward_improvement_on_j30(benchmark: Any, name: str) -> None:
    workflow, machine, problem = j30(name)
    first = parallel_sgs(problem, latest_finish(problem))
    start, span = benchmark(lambda: improve(problem, first))
    assert check(workflow, machine, problem, start, name) == span <= problem.makespan(first)


def test_sampling_1000_with_improvement_on_j30(benchmark: Any) -> None:
    workflow, machine, problem = j30("j3029_3")  # the hardest j30 instance: no early stop at the bound
    start, _ = benchmark.pedantic(
        lambda: sample(problem, latest_finish(problem), 1000, random.Random(0), justify=True),
        rounds=1,
        iterations=1,
    )
    assert check(workflow, machine, problem, start, "j3029_3") <= 1.1 * j30_optima()["j3029_3"]


@pytest.mark.parametrize("size", [2, 5, 10, 15])
def test_best_schedule_fast_on_agent_workflows(benchmark: Any, size: int) -> None:
    workflows = agent_workflows(size, 20)
    found = benchmark(lambda: [best_schedule(w, WORKER) for w in workflows])
    benchmark.extra_info["ms_per_call"] = round(1000 * benchmark.stats.stats.median / len(workflows), 3)
    for workflow, schedule in zip(workflows, found, strict=True):
        assert evaluate(workflow, WORKER, schedule).safe


def test_best_schedule_thorough_on_j30(benchmark: Any) -> None:
    workflow, machine, _ = j30("j3013_2")
    schedule = benchmark.pedantic(
        lambda: best_schedule(workflow, machine, effort="thorough"), rounds=3, iterations=1
    )
    score = evaluate(workflow, machine, schedule)
    assert score.safe and j30_optima()["j3013_2"] <= score.makespan <= 1.05 * j30_optima()["j3013_2"]
