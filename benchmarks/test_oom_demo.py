"""The OOM demonstration as a benchmark (issue 24, item 6; the turn and the machine: ``oom_demo.py``).

One agent turn of eight heavy tool calls (real processes, real memory) on a 512 MiB machine (a
cgroup v1 limit where one can be made, else declared), run under count caps k = 1, 2, 4, 8,
under the governor, and through LangGraph (an async graph's ToolNode, and GovernedToolNode).
The targets: the governor never overflows (no OOM kill, no failed call, its measured peak
within the capacity, its trace safe by ``peakopt score``) and is within 10 % of the hindsight
optimum of its actual durations, through LangGraph too; every count cap overflows or is slower
than the governor. 30-60 s. Run with ``python -m pytest benchmarks/test_oom_demo.py -s`` (the table
is printed; ``python benchmarks/oom_demo.py`` also draws docs/oom-demo.png).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from oom_demo import CALLS, CAPACITY_MB, CAPS, OVERHEAD_MB, Outcome, run_all, table

from peakopt.runtime.trace import trace_json


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    found = run_all()
    print(f"\n{found[0].accounting}\n{table(found)}")
    return {o.strategy: o for o in found}


@pytest.mark.parametrize("strategy", ["governor", "GovernedToolNode"])
def test_the_governor_never_overflows_and_is_within_ten_percent_of_hindsight(
    outcomes: dict[str, Outcome], strategy: str
) -> None:
    governed = outcomes[strategy]
    assert (governed.kills, governed.failed) == (0, 0)
    assert governed.peak_mb <= CAPACITY_MB
    assert governed.declared_peak_mb <= CAPACITY_MB
    assert governed.safe and not governed.overflowed
    assert governed.gap is not None and governed.gap <= 0.10


def test_every_count_cap_overflows_or_is_slower(outcomes: dict[str, Outcome]) -> None:
    governed = outcomes["governor"]
    for k in CAPS:
        cap = outcomes[f"cap {k}"]
        assert cap.overflowed or cap.makespan > governed.makespan, cap.strategy
    assert outcomes["cap 1"].safe  # one at a time fits: it is only slow
    assert any(outcomes[f"cap {k}"].overflowed for k in CAPS)


def test_langgraphs_async_tool_node_starts_every_call_and_overflows(outcomes: dict[str, Outcome]) -> None:
    plain = outcomes["ToolNode (async)"]
    assert plain.overflowed and not plain.safe
    assert plain.declared_peak_mb == pytest.approx(sum(mb + OVERHEAD_MB for _, mb, _ in CALLS))


def test_peakopt_score_reads_the_governors_trace_to_the_same_verdict(
    outcomes: dict[str, Outcome], tmp_path: Path
) -> None:
    governed = outcomes["governor"]
    path = tmp_path / "governor.json"
    path.write_text(trace_json(governed.trace))
    done = subprocess.run(
        [str(Path(sys.executable).parent / "peakopt"), "score", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(done.stdout.splitlines()[0])
    assert row["safe"] is True and row["gap"] == pytest.approx(governed.gap)


def test_without_a_cgroup_the_capacity_is_declared_and_an_overflow_is_measured() -> None:
    governed, uncapped = run_all(cgroup=False, caps=(len(CALLS),), graphs=())
    assert governed.accounting.startswith("declared") and governed.kills == 0
    assert governed.safe and governed.peak_mb <= CAPACITY_MB
    # nothing is killed, but the eight calls at once held more than the machine has
    assert (uncapped.kills, uncapped.failed) == (0, 0)
    assert uncapped.overflowed and not uncapped.safe and uncapped.peak_mb > CAPACITY_MB
