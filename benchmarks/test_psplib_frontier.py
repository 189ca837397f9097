"""New best known bounds: each open j90 and j120 instance asked "a schedule ending by its best lower bound?".

Per open instance (best known lower bound below the best known makespan,
``derived_best_bounds.csv``), :func:`frontier.frontier` asks the question for a
fixed budget (``frontier.BUDGET``: 30 s on j90, 10 s on j120; two provers, one
worker each). An infeasible answer is a lower bound above the best known one:
the question is then asked one higher, and again, while the answer is
infeasible (each within the budget; ``climb`` in the log), and the highest
infeasible one re-checked by the textbook CP-SAT model, another formulation, given
:data:`CONFIRM` times the budget on 2 workers, on the instance and else on its
reversal (``frontier.reversed_instance``). A feasible answer is a makespan
below the best known one: its schedule is re-checked by the oracle. Neither is
expected; what each instance got is kept (``PEAKOPT_BENCH_LOG``, JSON Lines),
and ``docs/solver.md`` reports the full run (kept in
``docs/results/frontier.jsonl``).

Select with ``PEAKOPT_FRONTIER_J90`` and ``PEAKOPT_FRONTIER_J120``, values as
in ``psplib_sets`` over the open instances only (``all``: 66 and 282; default
every 11th of j90's and every 47th of j120's, 6 each).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from frontier import BUDGET, SETS, Answer, confirmed_infeasible, confirmed_schedule, frontier
from psplib_sets import WORKERS
from pytest_benchmark.fixture import BenchmarkFixture

#: The textbook model's budget to confirm an infeasible answer, as a multiple of the question's.
CONFIRM = 10
CHOSEN = [
    *(("j90", n) for n in SETS["j90"].select("PEAKOPT_FRONTIER_J90", "every:11", closed=False)),
    *(("j120", n) for n in SETS["j120"].select("PEAKOPT_FRONTIER_J120", "every:47", closed=False)),
]


@pytest.mark.parametrize(("psplib", "name"), CHOSEN)
def test_frontier(benchmark: BenchmarkFixture, psplib: str, name: str) -> None:
    chosen = SETS[psplib]
    workflow, machine = chosen.instance(name)
    best = chosen.best()[name]
    assert best.lower < best.upper, f"{name} is closed"
    answer: Answer = benchmark.pedantic(
        frontier, args=(workflow, machine, best.lower, BUDGET[psplib]), rounds=1
    )
    confirmed: str | bool | None = None  # how a second method confirmed the answer, False if it did not
    bound: int | None = None  # the proven lower bound, when above the best known
    climb: list[list[object]] = []
    if answer.answer == "feasible":
        assert answer.starts is not None
        accepted = confirmed_schedule(workflow, machine, answer.starts, best.lower)
        assert accepted, f"the schedule of {name} ending by {best.lower} is not one the oracle accepts"
        confirmed = "oracle"
    elif answer.answer == "infeasible":
        # climb: ask one higher while the answer is infeasible, below the best known makespan
        proven = best.lower
        while proven + 1 < best.upper:
            step = frontier(workflow, machine, proven + 1, BUDGET[psplib])
            climb.append([proven + 1, step.answer, step.how, step.seconds])
            if step.answer != "infeasible":
                break
            proven += 1
        bound = proven + 1
        assert bound <= best.upper, f"{name}: a lower bound above the best known makespan"
        seconds = CONFIRM * BUDGET[psplib]
        confirmed = confirmed_infeasible(workflow, machine, proven, seconds, WORKERS) or False
    path = os.environ.get("PEAKOPT_BENCH_LOG")
    if path:
        row = {
            "set": psplib,
            "instance": name,
            "target": best.lower,
            "limit": BUDGET[psplib],
            "answer": answer.answer,
            "how": answer.how,
            "seconds": answer.seconds,
            "bound": bound,
            "climb": climb,
            "confirmed": confirmed,
        }
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(json.dumps(row) + "\n")
