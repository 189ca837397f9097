"""The quick optimum: the hindsight layers as one solver function, every claim checked by the oracle.

Like the lying backend of ``test_solver_backends.py``, a lying layer (a shortcut that claims an
optimum its schedule is not) must give an ``error`` result, never a reference; campaign's
:func:`~peakopt.campaign.hindsight.bound_one` then keeps no bound of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from solver_helpers import CHAIN, FIVE, LAYER_INSTANCES, MACHINE, PAIR, TRIPLE

import peakopt.solver.checked as checked
import peakopt.solver.pipeline as pipeline
import peakopt.solver.quick as quick
from peakopt.campaign import hindsight
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.judge.references import check
from peakopt.solver import quick_optimum, solve
from peakopt.solver.heuristics import Problem
from peakopt.solver.quick import LAYERS, Claim


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_gives_a_result_the_oracle_accepts_as_a_reference(layer: str) -> None:
    workflow, machine, optimum = LAYER_INSTANCES[layer]
    result = quick_optimum(workflow, machine)
    assert (result.params["layer"], result.status) == (layer, "optimal")
    assert result.makespan == pytest.approx(optimum) and result.lower_bound == result.makespan
    assert check(result, workflow, machine) == []  # what every reference must pass
    assert result.schedule is not None
    score = evaluate(workflow, machine, result.schedule, soft_as_hard=True)
    assert score.valid and score.safe and score.makespan == result.makespan
    # the same figures as solve()'s
    reference = solve(workflow, machine, time_limit=5, workers=1)
    assert (reference.makespan, reference.cva_floor) == (result.makespan, result.cva_floor)
    assert result.workflow_hash is result.machine_hash is None  # a bound, kept by its scenario's key


def test_solve_and_the_quick_optimum_share_one_oracle_check() -> None:
    # the names each module imports (vars: mypy sees no re-export of them)
    assert vars(quick)["verified"] is vars(pipeline)["verified"] is checked.verified
    assert vars(quick)["judge"] is vars(pipeline)["judge"] is checked.judge


def all_at_once(problem: Problem, effort: str, seed: int) -> Sequence[float]:
    """A lying heuristic: every step at 0, which ends below every bound (and overflows the cpu)."""
    return [0.0] * len(problem.ids)


def test_a_lying_shortcut_is_an_error_never_an_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quick, "best_starts", all_at_once)
    result = quick_optimum(PAIR, MACHINE)
    assert result.params["layer"] == "shortcut"  # it claimed the optimum: 1 s, below the bound of 1.625
    assert result.status == "error"
    assert (result.message or "").startswith(checked.REJECTED)
    assert "avoidable cva" in (result.message or "")
    bound = hindsight.bound_one(PAIR, MACHINE)
    assert bound.status == "error" and bound.value is None  # no gap is measured against it


def test_a_layer_claiming_a_makespan_its_starts_miss_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = quick.cliques

    def shorter(workflow: Workflow, machine: Machine, claim: Claim, eps: float) -> Claim | None:
        # the true optimum's valid, safe schedule, claimed to end 1 s sooner (at the bound it lies about)
        found = real(workflow, machine, claim, eps)
        assert found is not None
        return replace(found, makespan=found.makespan - 1, lower=found.makespan - 1, proven=True)

    monkeypatch.setattr(quick, "cliques", shorter)
    result = quick_optimum(PAIR, MACHINE)
    assert (result.params["layer"], result.status) == ("cliques", "error")
    assert "not where the search says" in (result.message or "")
    assert hindsight.bound_one(PAIR, MACHINE).status == "error"


def test_a_layer_claiming_an_unsafe_schedule_optimal_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def overlapped(workflow: Workflow, machine: Machine, claim: Claim, eps: float) -> Claim:
        # a and b (3 cores each on 4) side by side: ends at 1, claimed as proven by the clique bound
        return Claim("cliques", (0.0, 0.0, 1.0), 2.0, 2.0, True, 1.0)

    monkeypatch.setattr(quick, "cliques", overlapped)
    result = quick_optimum(PAIR, MACHINE)
    assert result.status == "error" and "avoidable cva 0.5" in (result.message or "")


def test_an_unproven_claim_goes_to_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []
    real = pipeline.solve  # the one quick imports

    def spy(*args: Any, **kwargs: Any) -> SolveResult:
        asked.append(kwargs["hint"])
        return real(*args, **kwargs)

    monkeypatch.setattr(quick, "solve", spy)
    result = quick_optimum(TRIPLE, FIVE, time_limit=5)
    assert len(asked) == 1 and result.params["layer"] == "cpsat" and result.solver == "cpsat"
    assert result.status == "optimal" and result.makespan == pytest.approx(4.0)
    assert quick_optimum(CHAIN, MACHINE).params["layer"] == "shortcut" and len(asked) == 1


@pytest.mark.parametrize("limit", [0.0, -1.0, float("inf")])
def test_a_time_limit_solve_refuses_is_refused_whatever_the_layer(limit: float) -> None:
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        quick_optimum(CHAIN, MACHINE, time_limit=limit)  # the shortcut would settle it
