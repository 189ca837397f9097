"""Mean deviation from the proven optimum over all 480 PSPLIB j30 instances, per heuristic.

Run ``nice -n 10 python benchmarks/heuristics_quality.py`` for the README's
table (a few minutes on one core); ``benchmarks/test_heuristics_quality.py``
asserts the targets.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # paths.py, when run as a script

from paths import j30_files, j30_optima

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.solver.heuristics import parse_method
from peakopt.solver.heuristics.rules import RULE_NAMES

#: The table's rows: every single pass, the same improved, and the multi-pass methods.
TABLE = (
    *(f"sgs:{scheme}:{rule}" for rule in RULE_NAMES for scheme in ("serial", "parallel")),
    *(f"fbi:sgs:{scheme}:{rule}" for rule in RULE_NAMES for scheme in ("serial", "parallel")),
    "best-rule",
    "fbi:best-rule",
    "admission",
    "admission:strict",
    "sampling:1000",
    "fbi:sampling:1000",
    "best:fast",
    "best:thorough",
)


@dataclass(frozen=True)
class Row:
    """One heuristic over the instances."""

    method: str
    mean: float  # mean relative deviation from the optimum
    worst: float
    optimal: int  # instances solved to optimality
    count: int
    median_ms: float  # per instance, robust to other load on a shared machine


def instances() -> list[tuple[Workflow, Machine, int]]:
    """Every j30 instance with its proven optimum."""
    optima = j30_optima()
    found = []
    for path in j30_files():
        suite = load(path)
        found.append((suite.workflows[0], suite.machines[0], optima[path.stem]))
    return found


def measure(method: str, cases: list[tuple[Workflow, Machine, int]], seed: int = 0) -> Row:
    """Run ``method`` on every instance; the oracle checks each schedule and gives its makespan.

    Raises
    ------
    AssertionError
        When a schedule is unsafe, invalid or shorter than the proven optimum.
    """
    runner = parse_method(method)
    times = []
    deviations = []
    for workflow, machine, optimum in cases:
        began = time.perf_counter()
        schedule = runner.schedule(workflow, machine, seed=seed)
        times.append(time.perf_counter() - began)
        score = evaluate(workflow, machine, schedule)
        assert score.safe and score.valid, (method, workflow.id, score.reasons)
        assert score.makespan >= optimum, (method, workflow.id, score.makespan, optimum)
        deviations.append(score.makespan / optimum - 1)
    optimal = sum(d == 0 for d in deviations)
    median_ms = 1000 * statistics.median(times)
    return Row(method, statistics.fmean(deviations), max(deviations), optimal, len(deviations), median_ms)


def markdown(rows: list[Row]) -> str:
    """The rows as the README's two tables: single passes by rule and scheme, then the rest."""
    by_name = {r.method: r for r in rows}
    heads = [f"`{p}sgs:{s}:RULE`" for p in ("", "fbi:") for s in ("serial", "parallel")]
    grid = ["| rule | " + " | ".join(heads) + " |", "|---|---:|---:|---:|---:|"]
    for rule in RULE_NAMES:
        names = [f"{p}sgs:{s}:{rule}" for p in ("", "fbi:") for s in ("serial", "parallel")]
        if any(n in by_name for n in names):
            cells = [f"{100 * by_name[n].mean:.2f} %" if n in by_name else "" for n in names]
            grid.append(f"| `{rule}` | " + " | ".join(cells) + " |")
    rest = [
        "| method | mean deviation | worst | optimal | ms per instance (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        if not r.method.removeprefix("fbi:").startswith("sgs:"):
            figures = (
                f"{100 * r.mean:.2f} % | {100 * r.worst:.1f} % | {r.optimal}/{r.count} | {r.median_ms:.2f}"
            )
            rest.append(f"| `{r.method}` | {figures} |")
    return "\n".join(grid) + "\n\n" + "\n".join(rest)


if __name__ == "__main__":
    cases = instances()
    rows = []
    for name in sys.argv[1:] or TABLE:
        rows.append(measure(name, cases))
        print(f"{name}: {100 * rows[-1].mean:.2f} %", file=sys.stderr)
    print(markdown(rows))
