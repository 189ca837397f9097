"""Records under an execution and sampled scenarios (oracle.sampled): plans, hooks, failures."""

from __future__ import annotations

from score_helpers import SAFE

from peakopt.instances import load
from peakopt.oracle.tables.sampled import Sampler, Sampling, plan_of, score_sampled
from peakopt.oracle.tables.score_rows import ReplayOptions
from peakopt.oracle.uncertain.scenarios import Noise

SUITE = load("bundled:refund")
RECORD = {"workflow": "refund", "source": "plan", "starts": SAFE}


def test_the_plan_is_the_record_s_starts_and_edges() -> None:
    plan = plan_of(RECORD | {"edges": [["fraud_score", "decide"]]}, SUITE, ReplayOptions())
    assert plan is not None and plan.starts == SAFE and plan.edges == (("fraud_score", "decide"),)
    assert plan_of(RECORD | {"edges": [["fraud_score"]]}, SUITE, ReplayOptions()) is None
    assert plan_of({"workflow": "refund", "starts": {"decide": 1.0}}, SUITE, ReplayOptions()) is None


def test_the_perfect_information_bound_is_asked_once_per_pair() -> None:
    asked = []

    def optima(workflow, machine, scenarios):  # type: ignore[no-untyped-def]
        asked.append((workflow.id, machine.name))
        return [8.0] * len(scenarios)

    sampler = Sampler(Sampling("enforced", 40, noise=Noise(0.2), optima=optima))
    rows = [score_sampled(RECORD, SUITE, None, ReplayOptions(), sampler) for _ in range(3)]
    assert asked == [("refund", "worker")]
    figures = rows[0].monte_carlo
    assert figures is not None and figures.bounded == 40
    assert figures.efficiency is not None and 0 < figures.efficiency <= 1
    assert figures.gap is not None and figures.gap >= 0  # every makespan is at least 8.6 > 8


def test_a_plan_that_cannot_run_is_an_invalid_row_and_unscored() -> None:
    cyclic = RECORD | {"edges": [["decide", "lookup_order"]]}
    row = score_sampled(cyclic, SUITE, None, ReplayOptions(), Sampler(Sampling("pos", 5)))
    assert not row.valid and "cannot execute the plan" in row.reasons[0]
    assert (
        row.monte_carlo is not None
        and not row.monte_carlo.scored
        and "cycle" in (row.monte_carlo.message or "")
    )
    assert row.monte_carlo.safe_rate == 0.0
