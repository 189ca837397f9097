"""The literature's stochastic protocol on peakopt's policies: safe runs, gaps never negative, the table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from paths import J30
from strategies import machines, workflows

from peakopt.campaign.literature import (
    PROTOCOL_POLICIES,
    Protocol,
    ProtocolItem,
    protocol_markdown,
    run_instance,
    run_protocol_item,
    table_rows,
)
from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.oracle.uncertain.literature import LITERATURE_DISTRIBUTIONS

QUICK = Protocol(replications=20, optimum_replications=2, optimum_limit=0.5, solve_limit=5.0, ga_seconds=0.05)


@settings(max_examples=10, deadline=None)
@given(workflows(integer=True, piecewise=False, max_tasks=6), machines(integer=True))
def test_the_perfect_information_gap_is_never_negative(workflow: Workflow, machine: Machine) -> None:
    """Every run of every policy is safe and no shorter than its scenario's optimum or its bound."""
    result = run_instance("w", workflow, machine, QUICK)
    assert set(result.cells) == {(d, p) for d in LITERATURE_DISTRIBUTIONS for p in PROTOCOL_POLICIES}
    for cell in result.cells.values():
        assert cell.unsafe == 0
        assert cell.negative == 0
        assert cell.bound_gap >= 0
        assert cell.gap_high is not None and cell.gap_low is not None
        assert cell.gap_high >= cell.gap_low >= -1e-9
        if result.cpl > 0:  # the metric (no sign: a sample mean may fall below the CPL)
            assert cell.deviation == pytest.approx((cell.mean_makespan - result.cpl) / result.cpl)
        else:
            assert cell.deviation is None
    assert all(result.proven[d] <= result.solved[d] == 2 for d in LITERATURE_DISTRIBUTIONS)


def test_a_j30_instance_and_its_table() -> None:
    suite = load(J30 / "j301_1.sm")
    protocol = Protocol(replications=30, optimum_replications=1, optimum_limit=1.0, ga_seconds=0.2)
    item = ProtocolItem("j301_1", suite.workflows[0], suite.machines[0], protocol)
    result = run_protocol_item(item)
    assert result.cpl == 38 and result.optimum == (43, True)  # PSPLIB's optimum, proven
    rows = table_rows([result, result])
    assert len(rows) == len(LITERATURE_DISTRIBUTIONS) * len(PROTOCOL_POLICIES)
    for row in rows:
        deviation, interval = row.figures["deviation"]
        # the same instance twice: the mean is its own, and so is every resample's
        assert deviation == pytest.approx(result.cells[row.distribution, row.policy].deviation)
        assert interval is not None and interval.low == interval.high == deviation
        high, low = row.figures["gap_high"][0], row.figures["gap_low"][0]
        assert high is not None and low is not None and high >= low >= 0
        assert row.figures["bound_gap"][0] is not None
        assert row.unsafe == row.negative == 0
        assert row.instances == 2
    table = protocol_markdown(rows)
    assert table.count("\n") == len(rows) + 1
    assert "| U1 | order (optimum) |" in table
    # a deviation of the expected makespan above the optimum's own (43 / 38 - 1 = 13.2 %)
    order = result.cells["U2", "order (optimum)"]
    assert order.deviation is not None and order.deviation > 43 / 38 - 1


def test_a_protocol_with_more_solved_than_drawn_is_refused() -> None:
    with pytest.raises(ValueError, match="optimum_replications in"):
        Protocol(replications=3, optimum_replications=4)
