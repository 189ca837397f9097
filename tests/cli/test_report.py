"""peakopt report: the per-method numbers of a small campaign, computed by hand."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from stress_helpers import env

from peakopt.cli.main import cli

# cpu capacity 2. Workflow "three": a (2 s, cpu 2), b (3 s, cpu 1), c (1 s, cpu 1), no edges;
# a fits beside nothing, b and c fit together: optimum 5 (a, then b with c).
# Workflow "chain": x (4 s, cpu 1) -> y (2 s, cpu 1): optimum 6.
SUITE = {
    "machines": [{"name": "m", "capacity": {"cpu": 2}}],
    "workflows": [
        {
            "id": "three",
            "meta": {"tier": "easy"},
            "tasks": [
                {"id": "a", "duration": 2, "demand": {"cpu": 2}},
                {"id": "b", "duration": 3, "demand": {"cpu": 1}},
                {"id": "c", "duration": 1, "demand": {"cpu": 1}},
            ],
        },
        {
            "id": "chain",
            "meta": {"tier": "hard"},
            "tasks": [
                {"id": "x", "duration": 4, "demand": {"cpu": 1}},
                {"id": "y", "duration": 2, "demand": {"cpu": 1}, "depends_on": ["x"]},
            ],
        },
    ],
}

# serial: three takes 2 + 3 + 1 = 6 (gap 1/5), always at full or half load: MRU (2 + 3/2 + 1/2) / 6 = 2/3;
#         chain takes 6 (gap 0) at half load: MRU 1/2.
# asap:   three all at 0: load 4, 3, 1 over [0,1), [1,2), [2,3): cva 1 + 1/2 = 3/2 (none unavoidable),
#         unsafe, MRU (1 + 1 + 1/2) / 3 but strict and safe MRU 0; chain as serial.
EXPECTED = {
    "serial": {
        "records": 2,
        "errors": 0,
        "safe_rate": 1.0,
        "gap": {"count": 2, "mean": 0.1, "median": 0.1, "p95": 0.19, "max": 0.2},
        "mean_avoidable_cva": 0.0,
        "strict_mru": (2 / 3 + 1 / 2) / 2,
        "safe_mru": (2 / 3 + 1 / 2) / 2,
    },
    "asap": {
        "records": 2,
        "errors": 0,
        "safe_rate": 0.5,
        "gap": {"count": 1, "mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0},
        "mean_avoidable_cva": 0.75,
        "strict_mru": 0.25,
        "safe_mru": 0.25,
    },
    "stress_helpers:raises": {
        "records": 2,
        "errors": 2,
        "safe_rate": 0.0,
        "gap": None,
        "mean_avoidable_cva": None,
        "strict_mru": 0.0,
        "safe_mru": 0.0,
    },
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def close(found: object, expected: object) -> None:
    if isinstance(expected, dict):
        assert isinstance(found, dict)
        for key, value in expected.items():
            close(found[key], value)
    elif isinstance(expected, float):
        assert found == pytest.approx(expected, abs=1e-9)
    else:
        assert found == expected


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    db = tmp_path / "r.sqlite"
    code, _, err = run(
        "stress", str(suite), "-m", "serial,asap,stress_helpers:raises", "--db", str(db), "--jobs", "1"
    )
    assert code == 0, err
    return db


def test_report_of_a_store_matches_the_hand_computed_figures(campaign: Path) -> None:
    code, out, err = run("report", str(campaign), "--json")
    assert code == 0, err
    # the summaries are the first document; the leaderboard of the methods the second
    summaries, ranked, _ = (json.loads(line) for line in out.splitlines())
    found = {s["group"]["source"]: s for s in summaries}
    assert set(found) == set(EXPECTED)
    # serial is best, the crashing method (efficiency 0) last
    assert [s["source"] for s in ranked["standings"]] == ["serial", "asap", "stress_helpers:raises"]
    for method, expected in EXPECTED.items():
        close(found[method], expected)
    assert "gap mean" in err and "stress_helpers:raises" in err


def test_report_by_tier_and_csv(campaign: Path) -> None:
    code, out, _ = run("report", str(campaign), "--by", "tier", "--csv")
    assert code == 0
    rows = {(r["group.source"], r["group.tier"]): r for r in csv.DictReader(io.StringIO(out))}
    assert len(rows) == 6
    assert float(rows[("serial", "easy")]["gap.max"]) == pytest.approx(0.2)
    assert float(rows[("asap", "easy")]["safe_rate"]) == 0.0
    assert rows[("stress_helpers:raises", "hard")]["errors"] == "1"


def test_report_of_a_scores_file_agrees(tmp_path: Path, campaign: Path) -> None:
    suite, refs = tmp_path / "suite.json", tmp_path / "refs.jsonl"
    schedules, scores = tmp_path / "schedules.jsonl", tmp_path / "scores.jsonl"
    assert run("solve", str(suite), "-o", str(refs))[0] == 0
    assert run("schedule", str(suite), "-m", "serial,asap", "-o", str(schedules))[0] == 0
    assert run("score", str(suite), "-s", str(schedules), "-r", str(refs), "-o", str(scores))[0] == 0
    code, out, err = run("report", str(scores), "--json")
    assert code == 0, err
    found = {s["group"]["source"]: s for s in json.loads(out.splitlines()[0])}
    assert set(found) == {"serial", "asap"}
    for method in found:
        close(found[method], EXPECTED[method])


def test_report_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("SQLite format 3\x00 but not really")
    code, _, err = run("report", str(bad))
    assert code == 1 and err.startswith("Error: ") and len(err.splitlines()) == 1
    code, _, err = run("report", str(tmp_path / "missing.sqlite"))
    assert code == 1 and "does not exist" in err
    # a --by field is checked against the rows read: a damaged file is the error to tell first
    assert run("report", str(bad), "--by", "colour")[0] == 1


def files(db: Path) -> dict[str, tuple[bytes, int]]:
    """The store and its side files: bytes and modification time."""
    found = {}
    for end in ("", "-wal", "-shm", "-journal"):
        path = Path(f"{db}{end}")
        if path.exists():
            found[end] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found


@pytest.mark.slow
def test_report_never_writes_to_a_store(tmp_path: Path, campaign: Path) -> None:
    before = files(campaign)
    assert set(before) == {""}  # the campaign closed it: everything is in the main file
    assert run("report", str(campaign), "--json")[0] == 0
    code, _, err = run("report", str(campaign), "-o", str(tmp_path / "report.html"), "--worst", "2")
    assert code == 0, err
    assert files(campaign) == before  # no byte, no -wal or -shm file, not even a touch


@pytest.mark.slow
def test_report_reads_a_store_on_a_read_only_file_system(tmp_path: Path, campaign: Path) -> None:
    command = [sys.executable, "-m", "peakopt.cli", "report", "--json"]
    if os.geteuid() == 0:  # root writes through permissions: mount the folder read-only instead
        if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"]).returncode:
            pytest.skip("needs unshare(1) and mount rights to mount a read-only folder")
        mount = tmp_path / "ro"
        mount.mkdir()
        script = f'mount --bind -o ro "{campaign.parent}" "{mount}" && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", script, "sh", *command, str(mount / campaign.name)]
    else:
        campaign.chmod(0o444)
        campaign.parent.chmod(0o555)
        command.append(str(campaign))
    try:
        done = subprocess.run(command, env=env(), capture_output=True, text=True, timeout=120)
    finally:
        campaign.parent.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert {s["group"]["source"] for s in json.loads(done.stdout.splitlines()[0])} == set(EXPECTED)


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("scores.sqlite", '{"workflow": "w", "valid": true}\n', "not a SQLite database"),
        ("r.db", "", "an empty file"),
        ("r.jsonl", "SQLite format 3\x00 and then nothing", "is not a peakopt results store"),
    ],
)
def test_a_store_path_that_is_not_a_store_is_never_read_as_json_lines(
    tmp_path: Path, name: str, content: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, _, err = run("report", str(path))
    assert code == 1 and err.startswith(f"Error: {path}: is not a peakopt results store") and says in err
    assert len(err.splitlines()) == 1


def test_report_refuses_a_plan_score_file(tmp_path: Path) -> None:
    plans, rows = tmp_path / "plans.jsonl", tmp_path / "plan-scores.jsonl"
    plans.write_text(json.dumps({"workflow": "refund", "source": "m", "edges": [["lookup_order", "decide"]]}))
    assert run("plan-score", "--truth", "bundled:refund", "-p", str(plans), "-o", str(rows))[0] == 0
    code, out, err = run("report", str(rows))
    assert code == 1 and out == ""
    assert err.strip() == (
        f"Error: {rows}: line 1: is a planning score (peakopt plan-score -o), "
        "not a scheduling score (peakopt score -o)"
    )
    # plan-score --scores refuses it the same way, instead of pairing nothing
    code, _, err = run("plan-score", "--truth", "bundled:refund", "-p", str(plans), "--scores", str(rows))
    assert code == 1 and "is a planning score" in err


@pytest.mark.slow
def test_the_html_report_never_shows_an_unsafe_gap(tmp_path: Path) -> None:
    # asap on the refund worker overflows memory to finish in 5.4 s, 37% under the 8.6 s optimum
    refs, schedules, scores = tmp_path / "refs.jsonl", tmp_path / "schedules.jsonl", tmp_path / "scores.jsonl"
    html = tmp_path / "report.html"
    assert run("solve", "bundled:refund", "--machine", "worker", "-o", str(refs))[0] == 0
    assert (
        run("schedule", "bundled:refund", "--machine", "worker", "-m", "asap,serial", "-o", str(schedules))[0]
        == 0
    )
    assert run("score", "bundled:refund", "-s", str(schedules), "-r", str(refs), "-o", str(scores))[0] == 0
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [(r["source"], r["safe"], r["gap"] is None) for r in rows] == [
        ("asap", False, True),
        ("serial", True, False),
    ]
    code, _, err = run(
        "report", str(scores), "--suite", "bundled:refund", "--reference", str(refs), "-o", str(html)
    )
    assert code == 0, err
    # the provenance table names the input files, and pytest's tmp_path may hold "-37" itself
    page = html.read_text().replace(str(tmp_path), "")
    assert "-37" not in page and "-37" not in err.replace(str(tmp_path), "")
