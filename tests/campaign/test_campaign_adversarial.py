"""Adversarial search: valid mutants, seeded reproducibility, a worst gap that never goes down."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import machines, workflows
from stress_helpers import small_suite, table

from peakopt.campaign.adversarial import (
    AdversarialResult,
    AdversarialSpec,
    Candidate,
    adversarial_search,
    mutate,
)
from peakopt.campaign.executors import Where, open_executor
from peakopt.campaign.stress import Settings
from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.instances.native import dump
from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate, with_reference
from peakopt.solver import solve
from peakopt.solver.heuristics import run as run_method

SETTINGS = Settings(time_limit=5.0, workers=1, seed=0, method_limit=10.0)


@settings(max_examples=60, deadline=None)
@given(workflows(), machines(), st.integers(0, 2**32))
def test_a_mutant_is_a_valid_workflow_of_the_same_steps(
    workflow: Workflow, machine: Machine, seed: int
) -> None:
    mutant, done = mutate(workflow, machine, random.Random(seed), "w~1")
    assert mutant.id == "w~1" and 1 <= len(done) <= 3
    assert [t.id for t in mutant.tasks] == [t.id for t in workflow.tasks]
    assert mutant.meta["mutations"] == list(done)
    again, _ = mutate(workflow, machine, random.Random(seed), "w~1")
    assert dump(again) == dump(mutant)  # the seed decides everything


def start() -> list[Candidate]:
    suite = load("bundled:default")
    machine = suite.machine("small")
    return [Candidate(w, machine, None) for w in suite.workflows[250:253]]  # three hard workflows


def searched(jobs: int, seed: int) -> AdversarialResult:
    spec = AdversarialSpec("admission", evaluations=24, seed=seed, population=4, batch=8, settings=SETTINGS)
    with open_executor(Where(jobs=jobs)) as executor:
        return adversarial_search(executor, start(), spec)


@pytest.mark.slow
def test_search_is_reproducible_on_any_executor_and_never_lowers_the_worst_gap() -> None:
    one, two = searched(1, seed=7), searched(2, seed=7)
    assert one.history == two.history
    assert [dump(c.workflow) for c in one.worst] == [dump(c.workflow) for c in two.worst]
    assert len(one.history) == 4  # the start, then three generations of eight
    assert all(later >= earlier for earlier, later in zip(one.history, one.history[1:], strict=False))
    assert one.history[-1] > 0, "24 mutants of hard workflows gave admission no gap at all"
    other = searched(1, seed=8)
    assert [dump(c.workflow) for c in other.worst] != [dump(c.workflow) for c in one.worst]


def test_the_worst_gap_found_is_real() -> None:
    found = searched(2, seed=7)
    worst = found.worst[0]
    assert worst.gap == found.history[-1] and worst.evaluation > 0
    reference = solve(worst.workflow, worst.machine, time_limit=5, workers=1)
    assert reference.status == "optimal"
    schedule = run_method(worst.workflow, worst.machine, "admission")
    score = with_reference(evaluate(worst.workflow, worst.machine, schedule), reference)
    assert score.safe and score.gap == pytest.approx(worst.gap)


def test_stress_search_saves_the_worst_instances(tmp_path: Path) -> None:
    suite, db, out = small_suite(tmp_path / "suite.json", workflows=4), tmp_path / "r.sqlite", tmp_path / "w"
    args = ["-m", "admission", "--db", str(db), "--search", "16", "--worst-dir", str(out), "--jobs", "2"]
    result = CliRunner().invoke(cli, ["stress", str(suite), *args])
    assert result.exit_code == 0, result.stderr
    assert "adversarial search: admission" in result.stderr
    files = sorted((out / "search" / "admission").glob("*.json"))
    assert files
    gaps = [json.loads(f.read_text())["meta"]["stress"]["gap"] for f in files]
    assert gaps == sorted(gaps, reverse=True)  # ranked worst first
    stored = table(db, "SELECT gap, evaluation FROM search WHERE method = 'admission' ORDER BY gap DESC")
    assert stored[0][0] == pytest.approx(gaps[0])  # the store keeps what the files hold
    assert max(evaluation for _, evaluation in stored) > 0  # mutants among them
    case = load(files[0])
    workflow, machine = case.workflows[0], case.machines[0]
    score = with_reference(
        evaluate(workflow, machine, run_method(workflow, machine, "admission")),
        solve(workflow, machine, time_limit=5, workers=1),
    )
    assert score.gap == pytest.approx(gaps[0])
