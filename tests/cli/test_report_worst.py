"""Worst cases: by gap, and among unsafe and invalid answers, with their reasons; the HTML page shows them."""

from __future__ import annotations

import re

from report_helpers import parse

from peakopt.campaign.summaries import summaries
from peakopt.cli.summaries import report_columns, report_table
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.plots.html import render_report
from peakopt.plots.worst import case_title, pick_worst, why


def answer(workflow: str, **fields: object) -> ScoreRow:
    base: dict[str, object] = {
        "source": "m",
        "workflow": workflow,
        "machine": "x",
        "valid": True,
        "safe": True,
    }
    return ScoreRow(**(base | fields))


ROWS = [
    answer("ok", gap=0.0, makespan=5.0, cva=0.0, reference_status="optimal"),
    answer("slow", gap=0.4, makespan=7.0, cva=0.0, reference_status="optimal"),
    answer("bounded", gap_vs_lb=0.6, makespan=8.0, cva=0.0, reference_status="feasible"),
    answer(
        "spill",
        safe=False,
        makespan=3.0,
        cva=0.5,
        avoidable_cva=0.5,
        overflows=["memory_mb over 8 in [0, 1)", "cpu over 4 in [2, 3)"],
        reference_status="optimal",
    ),
    answer("flood", safe=False, makespan=2.0, cva=2.0, avoidable_cva=2.0, reference_status="optimal"),
    answer(
        "garbled",
        valid=False,
        safe=False,
        reasons=["line 1: no schedule found in the answer"],
        reason_kinds=["parse"],
    ),
]


def test_pick_worst_ranks_each_kind() -> None:
    worst = pick_worst(ROWS, 2)
    assert [r.workflow for r in worst.by_gap] == ["bounded", "slow"]
    assert [r.workflow for r in worst.unsafe] == ["flood", "spill"]
    assert [r.workflow for r in worst.invalid] == ["garbled"]
    assert (worst.unsafe_count, worst.invalid_count) == (2, 1)
    one = pick_worst(ROWS, 1)
    assert [r.workflow for r in one.by_gap + one.unsafe + one.invalid] == ["bounded", "flood", "garbled"]
    assert pick_worst(ROWS, 0).by_gap == []


def test_why_says_what_is_wrong() -> None:
    assert why(ROWS[1]) == "gap 40.0%"
    assert why(ROWS[2]) == "gap 60.0% (to the lower bound)"
    assert why(ROWS[3]) == "avoidable cva 0.500; memory_mb over 8 in [0, 1) (and 1 more)"
    assert why(ROWS[5]) == "line 1: no schedule found in the answer"
    assert case_title("m", ROWS[4], "flood", "x") == "m on flood / x: unsafe, avoidable cva 2.000"


def test_the_html_lists_unsafe_and_invalid_answers_with_their_reasons() -> None:
    tables = parse(render_report(ROWS, listed=3))
    assert tables.heads["failing"] == ["source", "workflow", "machine", "verdict", "why"]
    assert [r[1:4] for r in tables.rows["failing"]] == [
        ["flood", "x", "unsafe"],
        ["spill", "x", "unsafe"],
        ["garbled", "x", "invalid"],
    ]
    assert tables.rows["failing"][2][4] == "line 1: no schedule found in the answer"
    assert "failing" not in parse(render_report(ROWS, listed=0)).heads
    assert "failing" not in parse(render_report(ROWS[:3], listed=3)).heads  # nothing unsafe: no table


def test_the_html_and_terminal_summaries_have_the_same_columns() -> None:
    rows = [*ROWS, answer("crash", valid=False, safe=False, reasons=["boom"], reason_kinds=["error"])]
    found = summaries(rows)
    terminal = report_table(found, "t")
    tables = parse(render_report(rows, columns=report_columns()))
    assert tables.heads["summary"] == [str(c.header) for c in terminal.columns]
    # and the same figures, cell for cell
    cells = [[" ".join(str(c).splitlines()) for c in column._cells] for column in terminal.columns]
    assert tables.rows["summary"] == [list(r) for r in zip(*cells, strict=True)]
    assert tables.heads["summary"][:5] == ["source", "efficiency", "rows", "errors", "invalid"]
    assert re.search(r"<h2[^>]*>Worst cases</h2>", render_report(rows))
