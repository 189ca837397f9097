"""The destructive step's provers: from above and below, forwards and mirrored, they prove j30 optima."""

from __future__ import annotations

import time
from typing import get_args

import pytest
from paths import J30, j30_optima

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.solver.backends import Limits
from peakopt.solver.bounds import lower_bound
from peakopt.solver.conflicts import conflict_structure, greedy_cliques
from peakopt.solver.cpsat import FROM_BELOW, CpsatOptions, Prover
from peakopt.solver.decide import usable
from peakopt.solver.feasibility import end, feasible, to_seconds, to_ticks
from peakopt.solver.heuristics import best_schedule
from peakopt.solver.scaling import scale
from peakopt.solver.search import SearchState, Shared, destructive

NAME = "j3013_1"  # the heuristic start is 3 above the optimum, proven in 1–2 s by either prover


def _j30(name: str) -> tuple[Workflow, Machine]:
    suite = load(J30 / f"{name}.sm")
    return suite.workflows[0], suite.machines[0]


@pytest.mark.slow
@pytest.mark.parametrize("prover", get_args(Prover))
def test_each_prover_alone_walks_down_to_the_optimum_and_proves_it(prover: Prover) -> None:
    workflow, machine = _j30(NAME)
    problem = scale(workflow, machine)
    cliques = greedy_cliques(problem)
    initial = to_ticks(problem, best_schedule(workflow, machine, seed=0, effort="fast"))
    assert initial is not None
    optimum = j30_optima()[NAME]
    assert end(problem, initial) > optimum  # so the prover has to find better schedules too
    outcome = Shared(initial, end(problem, initial), lower_bound(problem, cliques))
    # a cap, not a target: 4–6 s on a quiet machine, but one run under full load took over 60 s
    limits = Limits(time_limit=300, workers=1, seed=0)
    deadline = time.monotonic() + limits.time_limit
    destructive(
        SearchState(problem, outcome, conflict_structure(problem, cliques), limits, CpsatOptions(), deadline),
        prover,
    )
    assert outcome.makespan == outcome.bound == optimum
    if prover in FROM_BELOW:  # a schedule at LB = the optimum, or LB raised to meet the makespan
        assert outcome.phases[-1] in {
            f"{prover}:lb={optimum}:optimal",
            f"{prover}:lb={optimum}:feasible",
            f"{prover}:lb={optimum - 1}:infeasible",
            f"{prover}:energetic={optimum - 1}:infeasible",
        }
    else:
        assert outcome.phases[-1] == f"{prover}:ub-1={optimum - 1}:infeasible"
    assert feasible(problem, outcome.starts)
    schedule = Schedule(
        workflow=workflow.id, machine=machine.name, starts=to_seconds(problem, outcome.starts)
    )
    score = evaluate(workflow, machine, schedule)
    assert score.valid and score.safe and score.makespan == optimum


def test_the_mirrored_prover_runs_on_coarse_grids_only() -> None:
    coarse = scale(*_j30(NAME))
    steps = (
        Task(id="a", duration=1.01, demand={"cpu": 2}),
        Task(id="b", duration=0.55, demand={"cpu": 1}, depends_on=("a",)),
    )
    fine = scale(Workflow(id="fine", tasks=steps), Machine(name="m", capacity={"cpu": 2}))
    assert coarse.coarse and not fine.coarse
    assert usable(coarse, ("forward", "mirrored")) == ("forward", "mirrored")
    assert usable(coarse, ("mirrored",)) == ("mirrored",)
    assert usable(fine, ("forward", "mirrored")) == ("forward",)
    assert usable(fine, ("mirrored",)) == ("forward",)
    assert usable(coarse, ("lower", "lower-mirrored")) == ("lower", "lower-mirrored")
    assert usable(fine, ("lower", "lower-mirrored")) == ("lower",)
