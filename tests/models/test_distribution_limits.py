"""Distributions that cannot be sampled to finite durations are refused once, in the model.

Issue 22, class 4: every kind of ``varies`` distribution, at magnitudes from subnormal to the
largest float, through the model, ``validate``, ``stress --samples``, ``solve --robust expected``
and ``score --samples``. A distribution is accepted exactly when the largest value the sampler
can draw from it (its quantile at the largest uniform drawn, ``1 - 2**-53``) is at most
:data:`~peakopt.models.uncertainty.MAX_DRAW` (and, for a demand, that multiplier times the task's
largest demand too); then every figure reported is a finite number, and otherwise every
command says so in one ``Error:`` line.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import jsonl, run
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy.special import ndtri

from peakopt.campaign.store import read_score_rows
from peakopt.models import PeakoptError, Task, Workflow
from peakopt.models.uncertainty import MAX_DRAW
from peakopt.oracle.tables.montecarlo import summarise_runs
from peakopt.oracle.uncertain.scenarios import Noise, NoiseError, draw, values
from peakopt.oracle.vector.realised import RealisedScores

#: The largest uniform the sampler draws, and the standard normal quantile there.
U_HIGH = 1 - 2.0**-53
Z_HIGH = float(ndtri(U_HIGH))

#: What the draws reach at most: the limit, up to NumPy's and math's exp differing by an ulp.
CEILING = MAX_DRAW * (1 + 1e-12)
#: Magnitudes from the smallest subnormal to the largest float.
MAGNITUDES = (5e-324, 1e-310, 1e-300, 1e-3, 1.0, 1e20, 1e90, 1e99, 1e100, 1e101, 1e150, 1e300, 1.7e308)


def lognormal_top(p10: float, p50: float, p90: float) -> float:
    """The largest draw of the fitted lognormal, computed in logs (inf past the float range)."""
    sigma = (math.log(p90) - math.log(p10)) / (2 * 1.2815515655446004)
    top = math.log(p50) + sigma * Z_HIGH
    return math.inf if top > 709 else math.exp(top)


def duration_cases() -> list[tuple[str, dict[str, Any], float, float]]:
    """(name, distribution, nominal duration, largest draw) per kind and magnitude."""
    cases: list[tuple[str, dict[str, Any], float, float]] = []
    for m in MAGNITUDES:
        cases.append((f"uniform-{m:g}", {"kind": "uniform", "spread": 0.5}, m, m * 1.5))
        cases.append((f"empirical-{m:g}", {"kind": "empirical", "samples": [m / 2, m]}, 1.0, m))
        fixed = {"kind": "lognormal", "p10": m, "p50": m, "p90": m}  # draws exp(log(m)), m to rounding
        cases.append((f"lognormal-fixed-{m:g}", fixed, 1.0, math.exp(math.log(m))))
        if m <= 1e300:
            p = {"p10": m, "p50": m * 10, "p90": m * 100}
            cases.append((f"lognormal-{m:g}", {"kind": "lognormal", **p}, 1.0, lognormal_top(**p)))
        if 1e-300 <= m <= 1e307:  # subnormal percentiles lose the digits that place the median
            # a symmetric triangle from 0.6 m to 2.4 m (mode in the middle)
            tri = {"kind": "triangular", "p10": m, "p50": 1.5 * m, "p90": 2 * m}
            cases.append((f"triangular-{m:g}", tri, 1.0, 2.4 * m))
    cases.append(
        ("lognormal-issue", {"kind": "lognormal", "p10": 1e-300, "p50": 1, "p90": 1e300}, 1.0, math.inf)
    )
    cases.append(
        (
            "lognormal-subnormal",
            {"kind": "lognormal", "p10": 5e-324, "p50": 1e-320, "p90": 1e-310},
            1.0,
            1e-300,
        )
    )
    return cases


def demand_cases() -> list[tuple[str, dict[str, Any], float, float]]:
    """(name, multiplier distribution, nominal demand, largest realised demand)."""
    issue = {"kind": "lognormal", "p10": 1e-300, "p50": 1, "p90": 1e300}
    return [
        ("demand-uniform-1", {"kind": "uniform", "spread": 0.5}, 1.0, 1.5),
        ("demand-uniform-1e308", {"kind": "uniform", "spread": 0.5}, 1e308, 1.5e308),
        ("demand-lognormal-issue", issue, 1.0, math.inf),
        ("demand-lognormal-zero-demand", issue, 0.0, math.inf),  # the multiplier itself is refused
        ("demand-empirical-1e99", {"kind": "empirical", "samples": [1e99]}, 10.0, 1e100),
        ("demand-empirical-1e99-big", {"kind": "empirical", "samples": [1e99]}, 1e3, 1e102),
        (
            "demand-triangular-tiny",
            {"kind": "triangular", "p10": 5e-324, "p50": 5e-324, "p90": 5e-324},
            1e300,
            5e-24,
        ),
    ]


DURATIONS = duration_cases()
DEMANDS = demand_cases()


def task_json(field: str, distribution: dict[str, Any], nominal: float) -> dict[str, Any]:
    if field == "duration":
        return {"id": "a", "duration": nominal, "demand": {"cpu": 1}, "varies": {"duration": distribution}}
    return {"id": "a", "duration": 1.0, "demand": {"cpu": nominal}, "varies": {"demand": distribution}}


ALL = [("duration", *c) for c in DURATIONS] + [("demand", *c) for c in DEMANDS]
IDS = [c[1] for c in ALL]


def accepted(field: str, top: float) -> bool:
    return math.isfinite(top) and top <= MAX_DRAW


@pytest.mark.parametrize(("field", "name", "distribution", "nominal", "top"), ALL, ids=IDS)
def test_the_model_refuses_exactly_what_cannot_be_drawn_finitely(
    field: str, name: str, distribution: dict[str, Any], nominal: float, top: float
) -> None:
    data = task_json(field, distribution, nominal)
    if not accepted(field, top):
        with pytest.raises(ValidationError, match="can draw"):
            Task.model_validate(data)
        return
    task = Task.model_validate(data)
    workflow = Workflow(id="w", tasks=(task,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no invalid value, anywhere in the draw
        scenarios = draw(workflow, 50)
    drawn = [x for row in scenarios.lengths for x in row] + [x for row in scenarios.scales for x in row]
    assert all(math.isfinite(x) and 0 <= x <= CEILING for x in drawn)
    for k in range(3):
        realised = scenarios.workflow(k).tasks[0]
        assert all(0 <= a <= CEILING for s in realised.segments for a in s.demand.values())


@pytest.mark.parametrize(("field", "name", "distribution", "nominal", "top"), ALL, ids=IDS)
def test_the_sampler_s_extreme_uniforms_stay_finite(
    field: str, name: str, distribution: dict[str, Any], nominal: float, top: float
) -> None:
    if not accepted(field, top):
        return
    task = Task.model_validate(task_json(field, distribution, nominal))
    assert task.varies is not None
    chosen = task.varies.duration if field == "duration" else task.varies.demand
    assert chosen is not None
    base = nominal if field == "duration" else 1.0
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is exact enough
        ends = values(chosen, base, np.array([2.0**-54, 0.5, U_HIGH]))
    assert np.isfinite(ends).all() and (ends <= CEILING).all()


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["lognormal", "triangular", "empirical", "uniform"]),
    exponents=st.lists(st.floats(min_value=-323, max_value=308), min_size=3, max_size=3).map(sorted),
    nominal=st.floats(min_value=0, max_value=1.7e308),
)
def test_any_magnitudes_are_refused_or_drawn_finitely(
    kind: str, exponents: list[float], nominal: float
) -> None:
    low, mid, high = (min(10.0**e, 1.7e308) for e in exponents)
    distribution: dict[str, Any] = {"kind": kind}
    if kind == "uniform":
        distribution["spread"] = 0.5
    elif kind == "empirical":
        distribution["samples"] = [low, mid, high]
    else:
        distribution.update(p10=low, p50=mid, p90=high)
    for field in ("duration", "demand"):
        try:
            task = Task.model_validate(task_json(field, distribution, nominal))
        except ValidationError as exc:
            assert "can draw" in str(exc) or kind in ("triangular", "lognormal"), exc
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scenarios = draw(Workflow(id="w", tasks=(task,)), 20)
            realised = scenarios.workflow(0)
        assert all(math.isfinite(x) and x <= CEILING for row in scenarios.lengths for x in row)
        assert all(a <= CEILING for s in realised.tasks[0].segments for a in s.demand.values())


def suite_file(tmp_path: Path, field: str, distribution: dict[str, Any], nominal: float) -> Path:
    path = tmp_path / "suite.json"
    tasks = [
        task_json(field, distribution, nominal),
        {"id": "b", "duration": 1, "demand": {"cpu": 2}, "depends_on": ["a"]},
        {"id": "c", "duration": 2, "demand": {"cpu": 1}},
    ]
    path.write_text(
        json.dumps(
            {"machines": [{"name": "m", "capacity": {"cpu": 2}}], "workflows": [{"id": "w", "tasks": tasks}]}
        )
    )
    return path


def commands(tmp_path: Path, path: Path) -> dict[str, tuple[str, ...]]:
    plans = tmp_path / "plans.jsonl"
    plans.write_text(json.dumps({"workflow": "w", "machine": "m", "starts": {"a": 0, "b": 3, "c": 0}}) + "\n")
    return {
        "validate": ("validate", str(path)),
        "stress": ("stress", str(path), "-m", "admission", "--samples", "3", "--jobs", "1",
                   "--db", str(tmp_path / "r.sqlite"), "--time-limit", "5", "--bound-limit", "0.5"),
        "solve": ("solve", str(path), "--robust", "expected", "--samples", "4", "--json", "-q",
                  "--time-limit", "5"),
        "score": ("score", str(path), "-s", str(plans), "--samples", "3", "--execute", "order", "--json"),
    }  # fmt: skip


def finite_numbers(value: object) -> bool:
    """Whether every number inside ``value`` is finite (JSON's null is not a number)."""
    if isinstance(value, dict):
        return all(finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(finite_numbers(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


#: The CLI cases: per kind, a refused extreme, and accepted ones from subnormal to near the limit.
REFUSED = [c for c in ALL if not accepted(c[0], c[4])]
ACCEPTED_CLI = [
    c for c in ALL if accepted(c[0], c[4]) and (c[1].endswith(("-1e-310", "-1e+90")) or c[0] == "demand")
]


@pytest.mark.parametrize(
    ("field", "name", "distribution", "nominal", "top"), REFUSED, ids=[c[1] for c in REFUSED]
)
def test_every_command_refuses_them_in_one_error_line(
    tmp_path: Path, field: str, name: str, distribution: dict[str, Any], nominal: float, top: float
) -> None:
    path = suite_file(tmp_path, field, distribution, nominal)
    for command, args in commands(tmp_path, path).items():
        code, _, err = run(*args)
        assert code == 1, (command, err)
        errors = [line for line in err.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "Traceback" not in err, (command, err)
        assert "'a'" in errors[0] and "1e+100" in errors[0], (command, errors)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("field", "name", "distribution", "nominal", "top"), ACCEPTED_CLI, ids=[c[1] for c in ACCEPTED_CLI]
)
def test_what_is_accepted_gives_finite_figures_everywhere(
    tmp_path: Path, field: str, name: str, distribution: dict[str, Any], nominal: float, top: float
) -> None:
    path = suite_file(tmp_path, field, distribution, nominal)
    found = commands(tmp_path, path)
    outputs = {}
    for command, args in found.items():
        code, out, err = run(*args)
        assert code == 0, (command, err)
        assert "Warning" not in err and "nan" not in err.lower() and " inf" not in err, (command, err)
        outputs[command] = out
    for row in read_score_rows(tmp_path / "r.sqlite"):
        mc = row.monte_carlo
        assert mc is not None and mc.mean_makespan is not None and finite_numbers(mc.model_dump()), row
    (record,) = jsonl(outputs["solve"])
    assert finite_numbers(record) and record["params"]["expected_makespan"] is not None
    assert "inf" not in record["message"] and "nan" not in record["message"]
    for scored in jsonl(outputs["score"]):
        assert scored["monte_carlo"]["mean_makespan"] is not None and finite_numbers(scored), scored


def scores(makespans: list[float]) -> RealisedScores:
    size = len(makespans)
    span = np.array(makespans)
    return RealisedScores(
        makespan=span,
        cva=np.zeros(size),
        safe=np.ones(size, dtype=bool),
        overflow=np.zeros(size, dtype=bool),
        dependency_violations=np.zeros(size, dtype=np.int64),
        avoidable_cva=np.zeros(size),
        soft_overflow=np.zeros(size, dtype=bool),
        slowed_makespan=span,
    )


@pytest.mark.parametrize("bad", [math.inf, math.nan, -math.inf])
def test_no_figure_is_computed_from_a_non_finite_makespan(bad: float) -> None:
    workflow = Workflow(id="w", tasks=(Task(id="a", duration=1.0),))
    scenarios = draw(workflow, 3)
    with pytest.raises(PeakoptError, match="not a finite number"):
        summarise_runs(scores([1.0, bad, 2.0]), scenarios, "online", [1.0, 1.0, 1.0])
    with pytest.raises(PeakoptError, match="not a finite number"):
        summarise_runs(scores([1.0, 1.0, 2.0]), scenarios, "online", [1.0, bad, 1.0])


#: A global noise replaces the tasks' own distributions: the same rule, for nominal figures.
NOISY = [
    ("duration", 1e308, "--noise", 0.1),
    ("duration", 9.5e99, "--noise", 0.1),
    ("demand", 1e308, "--noise-demand", 0.1),
    ("demand", 9.5e99, "--noise-demand", 0.1),
]


@pytest.mark.parametrize(("field", "nominal", "option", "level"), NOISY)
def test_a_noise_that_would_draw_past_the_limit_is_refused(
    tmp_path: Path, field: str, nominal: float, option: str, level: float
) -> None:
    task = task_json(field, {"kind": "uniform", "spread": 0.0}, nominal)
    del task["varies"]
    workflow = Workflow.model_validate({"id": "w", "tasks": [task]})
    noise = Noise(duration=level) if option == "--noise" else Noise(demand=level)
    with pytest.raises(NoiseError, match="task 'a' under --noise"):
        draw(workflow, 3, noise=noise)
    assert draw(workflow, 3, noise=Noise()).lengths  # no noise: the nominal figures, whatever they are
    path = tmp_path / "suite.json"
    machines = [{"name": "m", "capacity": {"cpu": 2}}]
    path.write_text(json.dumps({"machines": machines, "workflows": [workflow.model_dump(exclude_none=True)]}))
    plans = tmp_path / "plans.jsonl"
    plans.write_text(json.dumps({"workflow": "w", "machine": "m", "starts": {"a": 0}}) + "\n")
    for args in (
        ("stress", str(path), "-m", "admission", "--jobs", "1", "--db", str(tmp_path / "r.sqlite")),
        ("score", str(path), "-s", str(plans), "--execute", "order"),
    ):
        code, _, err = run(*args, "--samples", "3", option, str(level))
        errors = [line for line in err.splitlines() if line.startswith("Error:")]
        assert code == 1 and len(errors) == 1 and "task 'a'" in errors[0] and "Traceback" not in err, err
