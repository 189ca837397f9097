"""Traces scored with measured demands: the hindsight optimum of non-round data is proven; unsafe earns 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peakopt.models import Machine, Task, Workflow
from peakopt.runtime.hindsight import score_trace
from peakopt.runtime.trace import StepRecord, StepUsage, Trace, trace_json

SMALL = Machine(name="small", capacity={"cpu": 2, "memory_mb": 512})


def measured_trace(spans: list[tuple[float, float, float, float]], machine: Machine = SMALL) -> Trace:
    """Steps ``s0, s1, ...`` declaring 100 MiB, each (start, end, MiB measured, cores measured)."""
    tasks = [Task(id=f"s{i}", duration=1.0, demand={"memory_mb": 100}) for i in range(len(spans))]
    steps = [
        StepRecord(
            id=f"s{i}",
            status="ok",
            start=start,
            end=end,
            usage=StepUsage(cpu_avg=cores, cpu_peak=cores, memory_peak_mb=mib),
        )
        for i, (start, end, mib, cores) in enumerate(spans)
    ]
    return Trace(
        workflow=Workflow(id="w", tasks=tuple(tasks)),
        machine=machine,
        policy="admission",
        started_at="2026-12-02T00:00:00+00:00",
        status="ok",
        steps=tuple(steps),
    )


#: As a governor's tools report it: resident memory in pages (MiB with 8 decimals), cores as psutil
#: gives them, durations to the microsecond; s0 and s1 overlap with 712 MiB on 512.
LIARS = [
    (0.0, 3.123457, 400.12345678, 0.5123457),
    (0.000113, 4.300001, 312.3456781, 0.25),
    (4.300001, 26.1, 12.50390625, 0.2512),
]
#: The same steps one after another: safe.
SERIAL = [
    (0.0, 3.123457, 400.12345678, 0.5123457),
    (3.123457, 7.42, 312.3456781, 0.25),
    (7.42, 29.2, 12.50390625, 0.2512),
]


def test_an_unsafe_measured_trace_earns_0_and_its_optimum_is_proven() -> None:
    row, best = score_trace(measured_trace(LIARS), "t", demand="measured", time_limit=10)
    assert row.valid and not row.safe
    assert row.efficiency == 0.0 and row.gap is None
    assert best is not None and best.status == "optimal" and best.exact, best.message


def test_a_safe_measured_trace_of_non_round_data_gets_its_efficiency_against_a_proven_optimum() -> None:
    row, best = score_trace(measured_trace(SERIAL), "t", demand="measured", time_limit=10)
    assert row.valid and row.safe
    assert best is not None and best.status == "optimal" and best.exact, best.message
    assert best.makespan is not None and row.makespan is not None
    assert row.efficiency == pytest.approx(best.makespan / row.makespan)


def test_measured_figures_are_judged_rounded_up_to_a_tenth_of_a_mib_and_a_thousandth_of_a_core() -> None:
    workflow, _ = measured_trace(LIARS).realised("measured")
    assert [t.peak("memory_mb") for t in workflow.tasks] == [400.2, 312.4, 12.6]
    assert [t.peak("cpu") for t in workflow.tasks] == [0.513, 0.25, 0.252]


def test_an_unsafe_run_earns_0_even_against_a_reference_that_is_only_feasible(monkeypatch: Any) -> None:
    import peakopt.solver

    real = peakopt.solver.solve

    def unproven(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        return found.model_copy(update={"status": "feasible", "lower_bound": found.makespan * 0.9})

    monkeypatch.setattr(peakopt.solver, "solve", unproven)
    row, best = score_trace(measured_trace(LIARS), "t", demand="measured")
    assert best is not None and best.status == "feasible"
    assert not row.safe and row.efficiency == 0.0
    safe, _ = score_trace(measured_trace(SERIAL), "t", demand="measured")
    assert safe.safe and safe.efficiency is None  # no proven optimum: no figure, never a guess


def test_score_says_why_a_safe_run_has_no_efficiency(monkeypatch: Any, tmp_path: Path) -> None:
    import peakopt.solver

    real = peakopt.solver.solve

    def unproven(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        update = {"status": "feasible", "lower_bound": found.makespan * 0.9, "message": "time limit"}
        return found.model_copy(update=update)

    monkeypatch.setattr(peakopt.solver, "solve", unproven)
    path = tmp_path / "serial.json"
    path.write_text(trace_json(measured_trace(SERIAL)))
    code, _, err = run("score", str(path), "--demand", "measured", "--json")
    assert code == 0, err
    (line,) = [line for line in err.splitlines() if line.startswith("Warning:")]
    assert line == (
        f"Warning: {path}: no efficiency: the hindsight optimum is not proven (feasible, time limit); "
        "the gap is bounded by gap_vs_lb"
    )


durations = st.decimals(min_value="0.000001", max_value="60", places=6).map(float)
mib = st.integers(min_value=0, max_value=200 * 256).map(lambda pages: pages / 256)  # whole 4 KiB pages
cores = st.floats(min_value=0, max_value=2, allow_nan=False)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(durations, mib, cores, st.booleans()), min_size=1, max_size=5),
    st.sampled_from([512, 384.5, 1000]),
)
def test_measured_traces_of_random_non_round_data_get_an_efficiency(
    steps: list[tuple[float, float, float, bool]], capacity: float
) -> None:
    """Each step starts with the previous one (``together``) or after it; the optimum is always proven."""
    spans, start, end = [], 0.0, 0.0
    for length, used, rate, together in steps:
        start = start if together else end
        end = round(start + length, 6)
        spans.append((start, end, used * 2.5, rate))  # up to 500 MiB each
    machine = Machine(name="small", capacity={"cpu": 2, "memory_mb": capacity})
    row, best = score_trace(measured_trace(spans, machine), "t", demand="measured", time_limit=10)
    assert best is not None and best.status == "optimal" and best.exact, best.message
    assert row.efficiency is not None
    if not row.safe:
        assert row.efficiency == 0.0
    else:
        assert 0 < row.efficiency <= 1 + 1e-9
