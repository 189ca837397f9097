"""The frontier question of ``benchmarks/frontier.py`` and its independent checks, on j30 optima.

At a proven optimum the question "a schedule ending by T?" is feasible (the
schedule checked by the oracle) and one below it infeasible (confirmed by the
textbook model): the answers a new best known bound would rest on.
"""

from __future__ import annotations

import pytest
from frontier import confirmed_by_milp, confirmed_infeasible, confirmed_schedule, frontier, reversed_instance
from paths import J30, j30_optima

from peakopt.instances import load

NAME = "j3013_8"  # optimum 106; about a second either way, by a prover (energetic reasoning cannot)


@pytest.mark.parametrize(("name", "how"), [("j301_1", {"energetic"}), (NAME, {"forward", "mirrored"})])
def test_below_the_optimum_is_infeasible_and_confirmed(name: str, how: set[str]) -> None:
    suite = load(J30 / f"{name}.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    below = j30_optima()[name] - 1
    answer = frontier(workflow, machine, below, 30.0)
    assert answer.answer == "infeasible" and answer.how in how
    assert answer.starts is None
    assert confirmed_infeasible(workflow, machine, below, 30.0, 2) in ("textbook", "textbook-reversed")


def test_at_the_optimum_is_feasible_and_the_oracle_accepts_it() -> None:
    suite = load(J30 / f"{NAME}.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    optimum = j30_optima()[NAME]
    answer = frontier(workflow, machine, optimum, 30.0)
    assert answer.answer == "feasible" and answer.starts is not None
    assert confirmed_schedule(workflow, machine, answer.starts, optimum)
    assert confirmed_infeasible(workflow, machine, optimum, 30.0, 2) is None
    # a schedule ending later than asked is refused
    assert not confirmed_schedule(workflow, machine, answer.starts, optimum - 1)


def test_a_broken_schedule_is_refused() -> None:
    suite = load(J30 / f"{NAME}.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    everything_at_once = {t.id: 0.0 for t in workflow.tasks}
    assert not confirmed_schedule(workflow, machine, everything_at_once, 10**6)


def test_the_reversal_turns_every_dependency_round_and_keeps_the_optimum() -> None:
    suite = load(J30 / f"{NAME}.sm")
    workflow, machine = suite.workflows[0], suite.machines[0]
    turned = reversed_instance(workflow)
    assert sorted(turned.edges) == sorted((b, a) for a, b in workflow.edges)
    optimum = j30_optima()[NAME]
    answer = frontier(workflow, machine, optimum, 30.0)
    assert answer.starts is not None
    # each start s of a schedule ending by T is T - s - length in the reversal, and the oracle accepts it
    lengths = {t.id: t.duration for t in workflow.tasks}
    mirrored = {i: optimum - s - lengths[i] for i, s in answer.starts.items()}
    assert confirmed_schedule(turned, machine, mirrored, optimum)
    assert not confirmed_schedule(turned, machine, answer.starts, optimum)  # unmirrored, it breaks the edges
    assert frontier(turned, machine, optimum - 1, 30.0).answer == "infeasible"


def test_the_milp_confirms_below_the_optimum_and_not_at_it() -> None:
    suite = load(J30 / "j301_1.sm")  # optimum 43: CBC answers both within a second
    workflow, machine = suite.workflows[0], suite.machines[0]
    optimum = j30_optima()["j301_1"]
    assert confirmed_by_milp(workflow, machine, optimum - 1, 60.0, 1)
    assert not confirmed_by_milp(workflow, machine, optimum, 60.0, 1)
