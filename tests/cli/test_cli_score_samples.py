"""peakopt score --execute / --samples / --noise: plans executed over sampled scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import jsonl, run
from score_helpers import ASAP, SAFE, ZERO, answers, references

from peakopt.cli.tables import dump_rows
from peakopt.instances import load
from peakopt.instances.native import to_jsonl
from peakopt.instances.records import read_records, reference_lines, write_jsonl
from peakopt.oracle.judge.references import check_references
from peakopt.oracle.tables.rows import ScoreRow
from peakopt.oracle.tables.score_rows import ReplayOptions, score_record


def plans(tmp_path: Path) -> Path:
    path = tmp_path / "plans.jsonl"
    write_jsonl(
        path,
        [
            {"workflow": "refund", "source": "tight", "starts": SAFE},
            {"workflow": "refund", "source": "asap", "starts": ASAP},
            {"workflow": "refund", "source": "lazy", "starts": ZERO | {"history_scan": 5.5, "decide": 9.5}},
        ],
    )
    return path


@pytest.mark.parametrize(("execute", "mode"), [("literal", "literal"), ("enforced", "runtime")])
def test_without_samples_the_output_is_the_replay_s_byte_for_byte(
    tmp_path: Path, execute: str, mode: str
) -> None:
    path = answers(tmp_path)
    code, out, err = run(
        "score",
        "bundled:refund",
        "-s",
        str(path),
        "-r",
        str(references(tmp_path)),
        "--json",
        "--execute",
        execute,
    )
    assert code == 0, err
    suite = load("bundled:refund")

    refs = check_references(
        str(references(tmp_path)),
        reference_lines(references(tmp_path)),
        [(w, m) for w in suite.workflows for m in suite.machines],
    )
    expected = [
        score_record(r.data, suite, refs, ReplayOptions(mode=mode), line=r.line, error=r.error)  # type: ignore[arg-type]
        for r in read_records(path)
    ]
    assert out == to_jsonl(dump_rows(expected))
    assert "monte_carlo" not in out and "--samples" not in err


def test_samples_add_monte_carlo_figures_reproducibly(tmp_path: Path) -> None:
    args = [
        "score",
        "bundled:refund",
        "-s",
        str(plans(tmp_path)),
        "--json",
        "--samples",
        "200",
        "--noise",
        "0.2",
    ]
    code, out, err = run(*args, "--execute", "literal")
    assert code == 0, err
    tight, asap, lazy = (r["monte_carlo"] for r in jsonl(out))
    assert tight["samples"] == 200 and tight["noise_duration"] == 0.2 and tight["noise_demand"] == 0.0
    # the tight plan starts steps the moment their predecessors should end: long runs break it
    assert tight["violation_rate"] > 0.3 and lazy["violation_rate"] < tight["violation_rate"]
    assert asap["overflow_rate"] > 0.9
    assert "P(overflow)" in err and "over 200 scenarios" in err
    assert run(*args, "--execute", "literal")[1] == out  # seeded: the same scenarios again
    assert run(*args, "--execute", "literal", "--seed", "1")[1] != out
    code, out, err = run(*args, "--execute", "enforced")
    tight = jsonl(out)[0]["monte_carlo"]
    assert tight["violation_rate"] == 0.0 and tight["mean_makespan"] >= 8.6 - 1e-9


def test_zero_noise_reproduces_the_deterministic_verdicts(tmp_path: Path) -> None:
    for execute in ("literal", "enforced", "order"):
        code, out, err = run(
            "score",
            "bundled:refund",
            "-s",
            str(plans(tmp_path)),
            "--json",
            "--samples",
            "5",
            "--noise",
            "0",
            "--execute",
            execute,
        )
        assert code == 0, err
        for row in jsonl(out):
            figures = row["monte_carlo"]
            assert figures["safe_rate"] == float(row["safe"])
            assert figures["mean_makespan"] == pytest.approx(row["makespan"])
            assert figures["p95_makespan"] == pytest.approx(row["makespan"])


def test_order_pos_and_an_online_plug_in(tmp_path: Path) -> None:
    path = tmp_path / "pos.jsonl"
    edges = [["fraud_score", "history_scan"], ["policy_search", "history_scan"]]
    write_jsonl(path, [{"workflow": "refund", "source": "robust", "starts": SAFE, "edges": edges}])
    code, out, err = run(
        "score",
        "bundled:refund",
        "-s",
        str(path),
        "--json",
        "--samples",
        "50",
        "--noise",
        "0.5",
        "--execute",
        "pos",
    )
    assert code == 0, err
    (row,) = jsonl(out)
    assert row["valid"] and row["monte_carlo"]["violation_rate"] == 0.0
    code, out, err = run(
        "score",
        "bundled:refund",
        "-s",
        str(plans(tmp_path)),
        "--json",
        "--samples",
        "20",
        "--noise",
        "0.3",
        "--execute",
        "online_policy_examples:one_at_a_time",
    )
    assert code == 0, err
    for row in jsonl(out):  # one step at a time is safe whatever the plan said
        assert row["safe"] and row["monte_carlo"]["safe_rate"] == 1.0
        assert row["monte_carlo"]["execution"] == "online_policy_examples:one_at_a_time"


def test_records_without_a_plan_count_unsafe(tmp_path: Path) -> None:
    code, out, err = run(
        "score", "bundled:refund", "-s", str(answers(tmp_path)), "--json", "--samples", "10", "--noise", "0.1"
    )
    assert code == 0, err
    rows = jsonl(out)
    assert len(rows) == 7 and all("monte_carlo" in r for r in rows)
    refusal, broken = rows[3]["monte_carlo"], rows[6]["monte_carlo"]
    assert not refusal["scored"] and refusal["safe_rate"] == 0.0 and refusal["message"]
    assert not broken["scored"] and broken["mean_makespan"] is None


def test_report_reads_the_sampled_scores(tmp_path: Path) -> None:
    target = tmp_path / "scores.jsonl"
    code, _, err = run(
        "score",
        "bundled:refund",
        "-s",
        str(plans(tmp_path)),
        "-o",
        str(target),
        "--samples",
        "10",
        "--noise",
        "0.1",
    )
    assert code == 0, err
    rows = [ScoreRow.model_validate(json.loads(line)) for line in target.read_text().splitlines()]
    assert all(r.monte_carlo is not None and r.monte_carlo.samples == 10 for r in rows)
    code, _, err = run("report", str(target), "-o", str(tmp_path / "report.html"))
    assert code == 0, err
    assert "Monte Carlo" in err and "P(overflow)" in err
    code, out, err = run("report", str(target), "--json")
    (tight, _, _) = json.loads(out.splitlines()[0])
    assert tight["monte_carlo"]["records"] == 1 and tight["monte_carlo"]["samples"] == 10


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--noise", "1.5", "--samples", "3"], "--noise"),
        (["--noise", "nan", "--samples", "3"], "--noise"),
        (["--noise-demand", "-0.1", "--samples", "3"], "--noise-demand"),
        (["--samples", "0"], "--samples"),
        (["--noise", "0.1"], "--noise needs --samples"),
        (["--seed", "3"], "--seed needs --samples"),
        (["--execute", "bogus"], "neither literal, enforced, order, pos nor module:function"),
        (["--replay", "runtime", "--execute", "literal"], "--replay runtime means --execute enforced"),
    ],
)
def test_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, err = run("score", "bundled:refund", "-s", str(plans(tmp_path)), *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_plug_in_that_cannot_load_is_one_error_line(tmp_path: Path) -> None:
    code, _, err = run(
        "score",
        "bundled:refund",
        "-s",
        str(plans(tmp_path)),
        "--execute",
        "no_such_module:f",
        "--samples",
        "2",
    )
    lines = err.splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("Error: plug-in 'no_such_module:f'")


def test_replay_is_a_deprecated_alias(tmp_path: Path) -> None:
    old = run("score", "bundled:refund", "-s", str(plans(tmp_path)), "--json", "--replay", "runtime")
    new = run("score", "bundled:refund", "-s", str(plans(tmp_path)), "--json", "--execute", "enforced")
    assert old[0] == 0 and old[1] == new[1] and "--replay is deprecated" in old[2]


def test_the_gap_to_each_scenario_s_own_optimum(tmp_path: Path) -> None:
    """The Monte Carlo gap is against the optimum of each realised scenario, solved independently here."""
    from peakopt.models import Schedule
    from peakopt.oracle import evaluate
    from peakopt.oracle.uncertain.scenarios import Noise, draw
    from peakopt.oracle.uncertain.simulate import execute
    from peakopt.solver import solve

    args = ["score", "bundled:refund", "-s", str(plans(tmp_path)), "--json", "--samples", "6"]
    code, out, err = run(*args, "--noise", "0.3", "--execute", "enforced")
    assert code == 0, err
    assert "gap vs PI" in err
    tight = jsonl(out)[0]["monte_carlo"]
    suite = load("bundled:refund")
    workflow, machine = suite.workflows[0], suite.machines[0]
    scenarios = draw(workflow, 6, seed=0, noise=Noise(0.3, 0.0))
    gaps, ratios = [], []
    for k in range(6):
        realised = scenarios.workflow(k)
        plan = Schedule(workflow=workflow.id, machine=machine.name, starts=SAFE)
        run_ = execute(realised, machine, "enforced", plan)
        judged = evaluate(realised, machine, run_)
        best = solve(realised, machine, time_limit=20, workers=1)
        assert best.status == "optimal" and best.makespan is not None
        ratios.append(best.makespan / judged.makespan if judged.safe else 0.0)
        if judged.safe:
            gaps.append((judged.makespan - best.makespan) / best.makespan)
    assert tight["bounded"] == 6
    assert tight["efficiency"] == pytest.approx(sum(ratios) / 6, abs=1e-6)
    assert (tight["gap"] is None) == (not gaps)
    if gaps:
        assert tight["gap"] == pytest.approx(sum(gaps) / len(gaps), abs=1e-6) and tight["gap"] >= -1e-9
    # no noise: the optimal plan meets every scenario's optimum
    code, out, err = run(*args, "--noise", "0", "--execute", "enforced", "--bound-limit", "5")
    assert code == 0, err
    tight = jsonl(out)[0]["monte_carlo"]
    assert tight["gap"] == pytest.approx(0.0, abs=1e-9) and tight["efficiency"] == pytest.approx(1.0)


def test_bound_limit_needs_samples(tmp_path: Path) -> None:
    code, _, err = run("score", "bundled:refund", "-s", str(plans(tmp_path)), "--bound-limit", "2")
    assert code == 2 and "--bound-limit needs --samples" in err


@pytest.mark.parametrize("edges", [None, []], ids=["no edges key", "empty edges"])
@pytest.mark.parametrize("samples", [(), ("--samples", "5", "--noise", "0")], ids=["nominal", "sampled"])
def test_pos_on_a_plan_without_a_partial_order_uses_the_one_its_starts_imply_and_says_so(
    tmp_path: Path, edges: list[list[str]] | None, samples: tuple[str, ...]
) -> None:
    # a solve reference carries "edges": [], a plan may carry none: as-soon-as-possible would
    # overlap fraud_score and history_scan (10 GiB on 8) and call the optimum unsafe
    path = tmp_path / "plans.jsonl"
    records: list[dict[str, object]] = [
        {"workflow": "refund", "source": "optimum", "starts": SAFE},
        {"workflow": "refund", "source": "overlapping", "starts": ASAP},
    ]
    if edges is not None:
        for record in records:
            record["edges"] = edges
    write_jsonl(path, records)
    code, out, err = run("score", "bundled:refund", "-s", str(path), "--json", "--execute", "pos", *samples)
    assert code == 0, err
    optimum, overlapping = jsonl(out)
    assert optimum["valid"] and optimum["safe"] and optimum["makespan"] == pytest.approx(8.6), optimum
    assert not overlapping["valid"] and any("resource-flow edges" in r for r in overlapping["reasons"])
    if samples:
        assert optimum["monte_carlo"]["safe_rate"] == 1.0
        assert not overlapping["monte_carlo"]["scored"]
    assert "2 plans carry no resource-flow edges" in " ".join(err.split()), err
