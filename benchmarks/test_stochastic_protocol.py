"""The stochastic RCPSP literature's protocol on PSPLIB j30, with the perfect-information gap (issue 26).

Durations drawn from the five distributions of Ballestín and Leus (2009) after Stork (2001)
(:mod:`peakopt.oracle.uncertain.literature`), common random numbers across policies; peakopt's four
policies (:data:`peakopt.campaign.literature.PROTOCOL_POLICIES`) on every scenario; per policy ×
distribution the literature's metric (expected makespan's deviation from the critical-path
length) and the expected gap to each scenario's own optimum, means over instances with 95 %
bootstrap intervals (:mod:`peakopt.campaign.literature`). After the timed run it asserts every run
safe (the vectorised oracle on every run, the exact one on the solved scenarios) and no run
shorter than its scenario's bound or optimum.

Select with environment variables:

- ``PEAKOPT_STOCH`` — the j30 instances: ``every:8`` (the default: 60, one in eight in PSPLIB's
  order), ``all``, ``none`` or a comma-separated list;
- ``PEAKOPT_STOCH_REPLICATIONS`` — scenarios per instance and distribution (default 1000);
- ``PEAKOPT_STOCH_SOLVED`` — of them, how many are solved for their own optimum (default 3) and
  ``PEAKOPT_STOCH_LIMIT`` the CP-SAT seconds each may take (default 0.5);
- ``PEAKOPT_STOCH_J120`` — j120 instances too (``none``, the default, or ``every:K``...), at
  ``PEAKOPT_STOCH_J120_REPLICATIONS`` scenarios (default 100);
- ``PEAKOPT_STOCH_JOBS`` — local processes (default 2); ``PEAKOPT_STOCH_TABLE`` — where the
  Markdown table is written (default ``.benchmarks/stochastic-table.md``, beside pytest-benchmark's
  own records).

Run with ``python -m pytest benchmarks/test_stochastic_protocol.py -s``: 235 s on the shared 2-core
machine (load about 2) for the default selection, 1,197 s on a quiet one for ``PEAKOPT_STOCH=all``;
the figures are in ``docs/stochastic.md``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from paths import J30, SHARED, select_names
from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.campaign.executors import Where, open_executor, run_items
from peakopt.campaign.literature import (
    InstanceResult,
    Protocol,
    ProtocolItem,
    protocol_markdown,
    run_protocol_item,
    table_rows,
)
from peakopt.instances import load

J120 = SHARED / "psplib" / "j120"
SETS = {"j30": (J30, "PEAKOPT_STOCH", "every:8"), "j120": (J120, "PEAKOPT_STOCH_J120", "none")}


def _number(variable: str, default: str) -> float:
    return float(os.environ.get(variable, default))


def names(family: str) -> list[str]:
    """The selected instances of ``j30`` or ``j120``, in PSPLIB's order (parameter set, then instance)."""
    folder, variable, default = SETS[family]
    found = [p.stem for p in folder.glob(f"{family}*_*.sm")]
    ordered = sorted(found, key=lambda n: tuple(int(x) for x in n.removeprefix(family).split("_")))
    return select_names(variable, ordered, default)


def protocol(family: str) -> Protocol:
    replications = "PEAKOPT_STOCH_REPLICATIONS" if family == "j30" else "PEAKOPT_STOCH_J120_REPLICATIONS"
    return Protocol(
        replications=int(_number(replications, "1000" if family == "j30" else "100")),
        optimum_replications=int(_number("PEAKOPT_STOCH_SOLVED", "3")),
        optimum_limit=_number("PEAKOPT_STOCH_LIMIT", "0.5"),
    )


def items(family: str) -> list[ProtocolItem]:
    folder = SETS[family][0]
    found = []
    for name in names(family):
        suite = load(folder / f"{name}.sm")
        found.append(ProtocolItem(name, suite.workflows[0], suite.machines[0], protocol(family)))
    return found


def run_all(work: Sequence[ProtocolItem]) -> tuple[list[InstanceResult], list[str], float]:
    """Every item on the local processes: results, errors, wall seconds."""
    began = time.perf_counter()
    results, errors = [], []
    jobs = int(_number("PEAKOPT_STOCH_JOBS", "2"))
    with open_executor(Where(jobs=jobs)) as executor:
        for outcome in run_items(executor, run_protocol_item, list(work), deadline=ProtocolItem.deadline):
            if outcome.value is None:
                errors.append(f"{outcome.item.name}: {outcome.error}")
            else:
                results.append(outcome.value)
    return results, errors, time.perf_counter() - began


def report(family: str, results: list[InstanceResult], seconds: float) -> str:
    settings = protocol(family)
    proven = sum(sum(r.proven.values()) for r in results)
    solved = sum(sum(r.solved.values()) for r in results)
    nominal = sum(r.optimum[1] for r in results)
    return (
        f"{family}: {len(results)} instances, {settings.replications} replications per instance and "
        f"distribution (seed {settings.seed}), {settings.optimum_replications} of them solved for their "
        f"own optimum at {settings.optimum_limit:g} s ({proven} of {solved} proven); nominal optima "
        f"proven {nominal} of {len(results)}; {seconds:.0f} s on {int(_number('PEAKOPT_STOCH_JOBS', '2'))} "
        f"processes\n\n" + protocol_markdown(table_rows(results, settings.distributions))
    )


@pytest.mark.parametrize("family", list(SETS))
def test_stochastic_protocol(benchmark: BenchmarkFixture, family: str) -> None:
    work = items(family)
    if not work:
        pytest.skip(f"no {family} instance selected ({SETS[family][1]})")
    results, errors, seconds = benchmark.pedantic(run_all, args=(work,), rounds=1, iterations=1)
    text = report(family, results, seconds)
    print("\n" + text)
    target = Path(os.environ.get("PEAKOPT_STOCH_TABLE", ".benchmarks/stochastic-table.md"))
    target.parent.mkdir(parents=True, exist_ok=True)
    if family != "j30":
        target = target.with_name(f"{target.stem}-{family}{target.suffix}")
    target.write_text(text + "\n", encoding="utf-8")
    assert not errors, errors
    assert len(results) == len(work)
    for result in results:
        for (distribution, policy), cell in result.cells.items():
            where = f"{result.name} {distribution} {policy}"
            assert cell.unsafe == 0, f"{where}: {cell.unsafe} unsafe runs"
            assert cell.negative == 0, f"{where}: {cell.negative} runs below their scenario's bound"
            assert cell.bound_gap >= 0
            assert cell.gap_high is None or cell.gap_low is None or cell.gap_high >= cell.gap_low >= 0
