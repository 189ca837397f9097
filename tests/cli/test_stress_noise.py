"""``peakopt stress --noise``: Monte Carlo rows on common scenarios, keyed by noise, resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run
from stress_helpers import small_suite, table

from peakopt.campaign.noise_run import NoiseRun
from peakopt.campaign.store import read_score_rows
from peakopt.campaign.stress import Settings
from peakopt.instances import load
from peakopt.oracle import ScoreRow
from peakopt.oracle.uncertain.literature import draw_literature
from peakopt.oracle.uncertain.scenarios import Noise

SAMPLES = 6


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_suite(tmp_path_factory.mktemp("suite") / "suite.json", workflows=3)


def stress(suite: Path, db: Path, *extra: str) -> tuple[int, str, str]:
    return run(
        "stress", str(suite), "-m", "admission,serial", "--db", str(db), "--jobs", "1", "--samples",
        str(SAMPLES), *extra,
    )  # fmt: skip


def rows(db: Path) -> dict[tuple[str | None, str | None, str | None, str], ScoreRow]:
    return {(r.workflow, r.machine, r.source, r.labels.get("noise", "")): r for r in read_score_rows(db)}


def test_without_noise_the_keys_and_rows_are_as_before() -> None:
    assert Settings(seed=3).params == '{"seed":3}'
    own = Settings(seed=3, noise=NoiseRun(None, samples=10)).params
    assert json.loads(own) == {
        "seed": 3,
        "noise": None,
        "noise_demand": None,
        "samples": 10,
        "execute": "online",
    }
    noisy = Settings(seed=3, noise=NoiseRun(Noise(0.25), samples=10, execute="order")).params
    assert json.loads(noisy) == {
        "seed": 3, "noise": 0.25, "noise_demand": 0.0, "samples": 10, "execute": "order"
    }  # fmt: skip


def test_stress_under_noise_judges_every_method_and_the_robust_reference(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    code, out, err = stress(suite, db, "--noise", "0.25", "--json")
    assert code == 0, err
    assert "bounds:" in err
    found = rows(db)
    assert {source for _, _, source, _ in found} == {"admission", "serial", "robust"}
    assert len(found) == 3 * 3 * 3  # workflows × machines × rows
    for (_, _, source, noise), row in found.items():
        mc = row.monte_carlo
        assert mc is not None and mc.samples == SAMPLES and noise == "0.25"
        assert mc.violation_rate == 0.0  # no online policy and no POS starts a step early
        assert mc.gap is None or mc.gap >= 0  # nothing beats the perfect-information bound (exact floor)
        if source in ("robust", "admission", "serial"):
            assert mc.safe_rate == 1.0 and mc.overflow_rate == 0.0  # demands are fixed
    summary = {s["group"]["source"]: s for s in json.loads(out)}
    assert summary["robust"]["monte_carlo"]["safe_rate"] == 1.0
    assert table(db, "SELECT COUNT(*) FROM bounds")[0][0] > 0


def test_a_rerun_resumes_and_reuses_the_bounds(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    assert stress(suite, db, "--noise", "0.1")[0] == 0
    before = table(db, "SELECT key, status, makespan FROM bounds ORDER BY key")
    code, _, err = stress(suite, db, "--noise", "0.1")
    assert code == 0, err
    assert "resuming: 27 rows already" in err and "bounds:" not in err  # nothing solved again
    # another method on the same scenarios solves no bound either
    code, _, err = run(
        "stress", str(suite), "-m", "asap", "--db", str(db), "--jobs", "1", "--samples", str(SAMPLES),
        "--noise", "0.1",
    )  # fmt: skip
    assert code == 0, err
    assert "bounds:" not in err
    assert table(db, "SELECT key, status, makespan FROM bounds ORDER BY key") == before


def test_rows_are_keyed_by_the_noise_settings(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    assert run("stress", str(suite), "-m", "serial", "--db", str(db), "--jobs", "1")[0] == 0
    assert stress(suite, db)[0] == 0  # --samples alone: the tasks' own distributions
    assert stress(suite, db, "--noise", "0.1")[0] == 0
    code, _, err = stress(suite, db, "--noise", "0.5")
    assert code == 0, err
    assert "resuming" not in err  # another noise level: other keys
    found = rows(db)
    assert len([k for k in found if k[3] == "0.1"]) == len([k for k in found if k[3] == "0.5"]) == 27
    plain = [r for k, r in found.items() if k[3] == ""]
    assert len(plain) == 9 and all(r.monte_carlo is None for r in plain)
    own = [r for k, r in found.items() if k[3] == "varies"]
    assert len(own) == 27 and all(r.monte_carlo is not None for r in own)
    code, out, _ = run("report", str(db), "--by", "noise", "--json")
    assert code == 0
    summaries = json.loads(out.splitlines()[0])  # the leaderboard is the second document
    groups = {(s["group"]["source"], s["group"]["noise"]) for s in summaries}
    assert ("serial", "0.1") in groups and ("serial", "0.5") in groups and ("serial", None) in groups


def test_zero_noise_reproduces_the_deterministic_scores(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    code, _, err = stress(suite, db, "--noise", "0", "--execute", "literal")
    assert code == 0, err
    for (_, _, source, _), row in rows(db).items():
        mc = row.monte_carlo
        assert mc is not None and row.makespan is not None
        assert mc.mean_makespan == pytest.approx(row.makespan)
        assert mc.p95_makespan == pytest.approx(row.makespan)
        assert mc.safe_rate == float(row.safe)
        if source == "optimum":  # the proven optimum, executed as planned: the bound itself
            assert mc.safe_rate == 1.0 and mc.gap == pytest.approx(0.0, abs=1e-9)
            assert row.gap == pytest.approx(0.0, abs=1e-9)


def test_executing_the_plans_adds_the_optimum_and_enforced_breaks_no_dependency(
    tmp_path: Path, suite: Path
) -> None:
    db = tmp_path / "r.sqlite"
    code, _, err = stress(suite, db, "--noise", "0.5", "--execute", "enforced")
    assert code == 0, err
    found = rows(db)
    assert {k[2] for k in found} == {"admission", "serial", "optimum", "robust"}
    assert all(r.monte_carlo is not None and r.monte_carlo.violation_rate == 0.0 for r in found.values())
    assert {r.labels["execute"] for r in found.values()} == {"enforced"}


@pytest.mark.parametrize(
    "args",
    [
        ["--execute", "order"],
        ["--bound-limit", "2"],
        ["--noise", "1"],
        ["--noise", "-0.1"],
        ["--noise", "0.1", "--execute", "sideways"],
        ["--noise", "0.1", "--search", "3"],
        ["--distribution", "Exp", "--noise", "0.1"],
        ["--distribution", "Exp", "--noise-demand", "0.1"],
        ["--distribution", "normal"],
        ["--distribution", "U2", "--search", "3"],
    ],
)
def test_usage_errors(tmp_path: Path, suite: Path, args: list[str]) -> None:
    code, _, _ = run("stress", str(suite), "-m", "serial", "--db", str(tmp_path / "r.sqlite"), *args)
    assert code == 2
    assert not (tmp_path / "r.sqlite").exists()


def test_executing_a_plan_as_pos_adds_its_flow_edges_and_stays_safe(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    code, _, err = stress(suite, db, "--noise", "0.5", "--execute", "pos")
    assert code == 0, err
    found = rows(db)
    assert {k[2] for k in found} == {"admission", "serial", "optimum", "robust"}
    for row in found.values():  # every plan there is safe at its peaks: its POS is safe under any durations
        assert row.valid and row.monte_carlo is not None and row.monte_carlo.safe_rate == 1.0, row.reasons


def test_a_literature_distribution_draws_the_campaigns_scenarios(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    code, _, err = stress(suite, db, "--distribution", "Exp")
    assert code == 0, err
    found = list(read_score_rows(db))
    assert {r.source for r in found} == {"admission", "serial", "robust"}
    assert {(r.labels["distribution"], r.labels["noise"], r.labels["execute"]) for r in found} == {
        ("Exp", "varies", "online")
    }
    # the Monte Carlo figures are over the protocol's own scenarios: serial, online, starts each
    # step when the one before ends, so it ends at the sum of the scenario's durations
    settings = Settings(seed=0, noise=NoiseRun(None, samples=SAMPLES, distribution="Exp"))
    workflows = {w.id: w for w in load(suite).workflows}
    for row in (r for r in found if r.source == "serial"):
        assert row.workflow is not None and row.monte_carlo is not None
        assert settings.noise is not None
        drawn = settings.noise.draw(workflows[row.workflow], settings.seed)
        assert drawn.lengths == draw_literature(workflows[row.workflow], SAMPLES, "Exp", seed=0).lengths
        assert row.monte_carlo.mean_makespan == pytest.approx(sum(map(sum, drawn.lengths)) / SAMPLES)
        assert row.monte_carlo.gap is None or row.monte_carlo.gap >= 0
    # another distribution is another campaign: other keys, nothing resumed
    code, _, err = stress(suite, db, "--distribution", "U2")
    assert code == 0, err
    assert "resuming" not in err
    assert {r.labels["distribution"] for r in read_score_rows(db)} == {"Exp", "U2"}


def test_a_duration_the_distribution_does_not_take_is_one_error_line(tmp_path: Path, suite: Path) -> None:
    # the generated suite's durations are under one time unit: U1 (d ± √d) would draw below zero
    db = tmp_path / "r.sqlite"
    code, out, err = stress(suite, db, "--distribution", "U1")
    assert code == 1 and out == ""
    [line] = [line for line in err.splitlines() if line.startswith("Error:")]
    assert "U1 is not defined for duration" in line and "task '" in line, err
    assert "Traceback" not in err and not db.exists()  # refused before the store was made
