"""A task's ``varies``: validated once, fitted as documented, round-tripped, hashed as content."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from pydantic import ValidationError
from strategies import varying_workflows

from peakopt.instances import InputError, load, render
from peakopt.instances.compact import compact_json
from peakopt.instances.native import parse_json, parse_jsonl
from peakopt.models import (
    Lognormal,
    Machine,
    SolveResult,
    Suite,
    Task,
    Triangular,
    Varies,
    Workflow,
    content_hash,
    nominal_hash,
)
from peakopt.models.uncertainty import TRIANGULAR_RATIOS, Z90, is_fixed
from peakopt.oracle.judge.references import InvalidReference, check_references


def task(varies: dict[str, Any]) -> Task:
    return Task.model_validate({"id": "a", "duration": 3, "demand": {"cpu": 1}, "varies": varies})


def triangular(p10: float, p50: float, p90: float) -> dict[str, Any]:
    return {"duration": {"kind": "triangular", "p10": p10, "p50": p50, "p90": p90}}


@pytest.mark.parametrize(
    ("varies", "message"),
    [
        ({}, "neither 'duration' nor 'demand'"),
        ({"duration": {"kind": "uniform", "spread": 1}}, "less than 1"),
        ({"duration": {"kind": "uniform", "spread": -0.1}}, "greater than or equal to 0"),
        ({"duration": {"kind": "uniform", "spread": "0.1"}}, "valid number"),
        ({"duration": {"kind": "gauss"}}, "does not match any of the expected tags"),
        ({"duration": {"spread": 0.1}}, "Unable to extract tag"),
        ({"duration": {"kind": "lognormal", "p10": 3, "p50": 2, "p90": 5}}, r"p10 <= p50 <= p90"),
        ({"duration": {"kind": "lognormal", "p10": 0, "p50": 2, "p90": 5}}, r"p10 > 0"),
        ({"duration": {"kind": "lognormal", "p10": 1, "p50": 2, "p90": math.inf}}, "finite"),
        (triangular(2, 4.9, 5), "p50 must lie 38.2% to 61.8%"),
        (triangular(0.1, 2, 4), "starts below 0"),
        ({"demand": {"kind": "empirical", "samples": []}}, "at least 1 item"),
        ({"demand": {"kind": "empirical", "samples": [1, -1]}}, "greater than or equal to 0"),
        ({"demand": {"kind": "uniform", "spread": 0.1, "p10": 1}}, "Extra inputs"),
        ({"demand": {"kind": "uniform", "spread": 0.1}, "durations": None}, "Extra inputs"),
    ],
)
def test_varies_rules(varies: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        task(varies)


def test_a_bad_distribution_is_one_error_line_naming_the_task(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(
        json.dumps({"id": "w", "tasks": [{"id": "a", "duration": 1, "varies": triangular(2, 4.9, 5)}]})
    )
    with pytest.raises(InputError, match=r"task 'a' varies duration triangular: no triangular distribution"):
        load(path)


def test_triangular_fit_meets_its_three_percentiles() -> None:
    dist = task(triangular(2, 3, 4.5)).varies.duration
    assert isinstance(dist, Triangular)
    low, mode, high = dist.fit
    assert 0 <= low <= mode <= high
    rng = random.Random(0)
    values = sorted(rng.triangular(low, high, mode) for _ in range(100_000))
    for p, target in ((0.1, 2), (0.5, 3), (0.9, 4.5)):
        # a quantile of 100,000 draws is within ~0.5 % here; 2 % is a loose but failing bound
        assert values[int(p * len(values))] == pytest.approx(target, rel=0.02)


def test_triangular_ratios_are_the_golden_section() -> None:
    assert pytest.approx((1 - 0.6180339887, 0.6180339887)) == TRIANGULAR_RATIOS
    assert task(triangular(2, 2, 2)).varies.duration.fit == (2, 2, 2)


def test_lognormal_fit_keeps_the_median_and_the_p90_p10_ratio() -> None:
    dist = task({"duration": {"kind": "lognormal", "p10": 1, "p50": 2, "p90": 9}}).varies.duration
    assert isinstance(dist, Lognormal)
    assert math.exp(dist.mu) == pytest.approx(2)
    assert math.exp(dist.mu + Z90 * dist.sigma) / math.exp(dist.mu - Z90 * dist.sigma) == pytest.approx(9)


def test_fixed_distributions() -> None:
    assert is_fixed(None)
    assert is_fixed(Varies.model_validate({"duration": {"kind": "uniform", "spread": 0}}).duration)
    assert not is_fixed(Varies.model_validate({"duration": {"kind": "uniform", "spread": 0.1}}).duration)


@given(varying_workflows())
def test_varies_round_trips_through_every_peakopt_writer(workflow: Workflow) -> None:
    suite = Suite(workflows=(workflow,), machines=(Machine(name="m", capacity={"cpu": 4}),))
    bare = Suite(workflows=(workflow,))
    texts = [
        (render(suite, "json"), "x.json"),
        (compact_json(suite), "x.json"),
        (render(bare, "jsonl"), "x.jsonl"),
    ]
    for text, name in texts:
        parse = parse_jsonl if name.endswith("jsonl") else parse_json
        again = parse(text, name).workflows[0]
        assert again == workflow
        assert content_hash(again) == content_hash(workflow)


def test_content_hash_covers_varies_and_the_nominal_hash_does_not() -> None:
    plain = Workflow(id="w", tasks=(Task(id="a", duration=3),))
    varying = Workflow(
        id="w",
        tasks=(
            Task.model_validate(
                {"id": "a", "duration": 3, "varies": {"duration": {"kind": "uniform", "spread": 0.1}}}
            ),
        ),
    )
    assert content_hash(varying) != content_hash(plain)
    assert nominal_hash(varying) == nominal_hash(plain) == content_hash(plain)
    longer = Workflow(id="w", tasks=(Task(id="a", duration=4),))
    assert nominal_hash(longer) != nominal_hash(plain)


def test_a_reference_solved_before_varies_was_added_stays_valid() -> None:
    """A reference is solved at nominal figures: saying how they vary leaves it valid."""
    plain = Workflow(id="w", tasks=(Task(id="a", duration=3, demand={"cpu": 1}),))
    machine = Machine(name="m", capacity={"cpu": 2})
    reference = SolveResult(
        workflow="w",
        machine="m",
        status="optimal",
        makespan=3.0,
        lower_bound=3.0,
        starts={"a": 0.0},
        workflow_hash=content_hash(plain),
        machine_hash=content_hash(machine),
    )
    line = SolveResult.model_validate_json(reference.model_dump_json())
    varying = plain.model_copy(
        update={
            "tasks": (
                plain.tasks[0].model_copy(
                    update={"varies": Varies.model_validate({"duration": {"kind": "uniform", "spread": 0.2}})}
                ),
            )
        }
    )
    checked = check_references("refs.jsonl", [(1, line)], [(varying, machine)])
    assert checked[("w", "m")].makespan == 3.0
    longer = Workflow(id="w", tasks=(Task(id="a", duration=4, demand={"cpu": 1}),))
    with pytest.raises(InvalidReference, match="different workflow"):
        check_references("refs.jsonl", [(1, line)], [(longer, machine)])


def test_the_task_schema_shows_varies_and_its_kinds() -> None:
    schema = json.dumps(Task.model_json_schema())
    assert '"varies"' in schema
    for kind in ("uniform", "triangular", "lognormal", "empirical"):
        assert f'"const": "{kind}"' in schema or f'"{kind}"' in schema
