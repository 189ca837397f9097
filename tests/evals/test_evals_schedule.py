"""peakopt/schedule end to end with Inspect's mockllm (offline): the log's scores are peakopt score's."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from evals_helpers import ANSWERS, OPT, canned, log_values, same, scored_rows, write_suite
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    get_model,
)

from peakopt.evals.arguments import TaskError
from peakopt.evals.references import cache_dir
from peakopt.evals.schedule import schedule
from peakopt.evals.values import SCHEDULE_KEYS
from peakopt.instances.records import write_jsonl
from peakopt.oracle.tables.aggregate import summarise
from peakopt.oracle.tables.rows import ScoreRow


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    return tmp_path / "cache"


def run_task(suite: Path, tmp_path: Path, **args: Any) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=canned)
    (log,) = inspect_eval(
        schedule(suite=str(suite), **args),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    return log


def test_the_log_holds_the_oracle_verdict_of_each_answer(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    log = run_task(suite, tmp_path)
    values = log_values(log)
    assert set(values) == set(ANSWERS)
    assert values["optimal"]["efficiency"] == pytest.approx(1.0)
    assert values["optimal"]["gap"] == pytest.approx(0.0)
    assert values["serial"]["efficiency"] == pytest.approx(OPT / 10.4)
    assert values["unsafe"] == values["unsafe"] | {
        "valid": 1.0,
        "safe": 0.0,
        "efficiency": 0.0,
        "safe_mru": 0.0,
    }
    assert math.isnan(values["unsafe"]["gap"]) and values["unsafe"]["avoidable_cva"] > 0
    assert values["garbage"]["valid"] == 0.0 and values["garbage"]["efficiency"] == 0.0
    assert math.isnan(values["garbage"]["makespan"])
    # a reasoning model: the final answer is scored, never its reasoning
    assert values["thinker"]["efficiency"] == pytest.approx(1.0)
    assert values["mute"]["valid"] == 0.0
    sample = next(s for s in log.samples or [] if s.metadata["workflow"] == "mute")
    assert sample.metadata == sample.metadata | {"machine": "worker", "setting": "rasc", "tier": "m"}
    # the references were solved once into the cache, keyed by the suite's content
    (cached,) = cache_dir().glob("*.jsonl")
    assert cached.parent == cache / "references" and len(cached.read_text().splitlines()) == len(ANSWERS)


def test_the_scores_equal_peakopt_score_on_the_same_answers(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    log = run_task(suite, tmp_path)
    values = log_values(log)
    (reference,) = cache_dir().glob("*.jsonl")
    # peakopt score on the log itself, and on the same final answers as JSON Lines
    from_log = scored_rows(suite, Path(log.location), reference)
    answers = tmp_path / "answers.jsonl"
    write_jsonl(
        answers,
        [
            {"workflow": w, "machine": "worker", "setting": "rasc", "response": a}
            for w, (_, a) in ANSWERS.items()
        ],
    )
    from_answers = scored_rows(suite, answers, reference)
    for workflow, value in values.items():
        row = from_log[workflow]
        assert (row["source"], row["setting"]) == ("mockllm/model", "rasc")
        for key in ("valid", "safe", "makespan", "cva", "avoidable_cva", "strict_mru", "safe_mru", "gap"):
            if value["valid"] or key in ("valid", "safe", "strict_mru", "safe_mru"):
                assert same(value[key], float(row[key] or 0.0) if key.endswith("mru") else row[key]), (
                    workflow,
                    key,
                )
        assert {k: v for k, v in row.items() if k not in ("line", "id", "source")} == {
            k: v for k, v in from_answers[workflow].items() if k not in ("line", "id", "source")
        }
    # Inspect's mean of each key is peakopt's aggregate over the same rows
    summary = summarise([ScoreRow.model_validate(r) for r in from_log.values()])
    metrics = {s.name: s.metrics["mean"].value for s in log.results.scores} if log.results else {}
    assert set(metrics) == set(SCHEDULE_KEYS)
    assert metrics["valid"] == pytest.approx(1 - summary.invalid / summary.records)
    assert metrics["safe"] == pytest.approx(summary.safe_rate)
    assert metrics["makespan"] == pytest.approx(summary.mean_makespan)
    assert metrics["avoidable_cva"] == pytest.approx(summary.mean_avoidable_cva)
    assert metrics["strict_mru"] == pytest.approx(summary.strict_mru)
    assert metrics["safe_mru"] == pytest.approx(summary.safe_mru)
    assert summary.gap is not None and metrics["gap"] == pytest.approx(summary.gap.mean)


def test_parameters_choose_the_samples(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    log = run_task(suite, tmp_path, tiers="o,s,u", limit=2, seed=3, setting="no-profile")
    chosen = [s.metadata["workflow"] for s in log.samples or []]
    assert len(chosen) == 2 and set(chosen) <= {"optimal", "serial", "unsafe"}
    assert {s.metadata["setting"] for s in log.samples or []} == {"no-profile"}
    again = run_task(suite, tmp_path, tiers=["o", "s", "u"], limit=2, seed=3, setting="no-profile")
    assert sorted(s.id for s in again.samples or []) == sorted(s.id for s in log.samples or [])
    # only the chosen pairs were solved
    (cached,) = cache_dir().glob("*.jsonl")
    assert {json.loads(line)["workflow"] for line in cached.read_text().splitlines()} == set(chosen)


def test_a_given_reference_file_is_checked_before_any_sample_runs(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", ("optimal",))
    bad = tmp_path / "refs.jsonl"
    record = {"workflow": "optimal", "machine": "worker", "status": "optimal", "makespan": 5.0}
    bad.write_text(json.dumps(record | {"lower_bound": 5.0, "starts": {}}) + "\n")
    with pytest.raises(
        TaskError,
        match=r"^-T reference='.*refs\.jsonl': .*refs\.jsonl: line 1: reference for workflow 'optimal'",
    ):
        run_task(suite, tmp_path, reference=str(bad))


@pytest.mark.slow
def test_the_hard_split_of_the_bundled_default_has_no_pair_a_trivial_answer_solves(cache: Path) -> None:
    from peakopt.evals.references import checked_references
    from peakopt.evals.suites import load_suite
    from peakopt.models import Schedule
    from peakopt.oracle import evaluate, same_time
    from peakopt.solver.heuristics import run

    task = schedule(split="hard")
    assert task.metadata is not None and task.metadata["split"] == "hard"
    suite = load_suite("bundled:default")
    pairs = [(w, m) for w in suite.workflows for m in suite.machines]
    refs = checked_references(task.metadata["reference"], pairs)
    chosen = {(s.metadata or {})["workflow"] + "@" + (s.metadata or {})["machine"] for s in task.dataset}
    assert 0 < len(chosen) < len(pairs)
    solved_by_trivial = 0
    for workflow, machine in pairs:
        optimum = refs[(workflow.id, machine.name)].makespan
        assert refs[(workflow.id, machine.name)].status == "optimal" and optimum is not None
        answers = {
            "zero": dict.fromkeys(workflow.index, 0.0),
            "serial": run(workflow, machine, "serial").starts,
            "asap": run(workflow, machine, "asap").starts,
        }
        trivial = False
        for starts in answers.values():
            score = evaluate(
                workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts)
            )
            span = score.slowed_makespan if (score.avoidable_cva_soft or 0) > 0 else score.makespan
            if (
                score.valid
                and score.safe
                and span is not None
                and (span <= optimum or same_time(span, optimum))
            ):
                trivial = True
        solved_by_trivial += trivial
        assert (f"{workflow.id}@{machine.name}" in chosen) is not trivial, (workflow.id, machine.name)
    assert len(chosen) == len(pairs) - solved_by_trivial
    # the figures the benchmark page states are these
    from paths import ROOT

    from peakopt.campaign.floor import suite_floor

    page = (ROOT / "docs" / "benchmark.md").read_text()
    assert (
        f"So {solved_by_trivial} of the {len(pairs)} pairs" in page and f"other {len(chosen)} pairs" in page
    )
    for line in suite_floor(suite, refs).lines:
        figures = f"{line.optimal} ({line.share:.1%})".replace("%", " %")
        assert (
            f"| `{line.answer}` |" in page
            and figures in page
            and f"| {line.safe} | {line.efficiency:.3f} |" in page
        )


def test_a_split_the_task_does_not_have_is_refused(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    with pytest.raises(TaskError, match="-T split='easy'"):
        schedule(suite=str(suite), split="easy")
