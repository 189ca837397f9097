"""A real ``peakopt stress`` killed with SIGKILL midway resumes to exactly the uninterrupted result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from stress_helpers import env, small_suite, table

from peakopt.campaign.store import read_score_rows
from peakopt.oracle import ScoreRow

METHODS = "serial,admission,stress_helpers:slow"
ROWS = 12 * 3 * 3  # workflows x machines x methods


def command(suite: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "peakopt.cli", "stress", str(suite), "-m", METHODS, "--db", str(db)]


def comparable(rows: list[ScoreRow]) -> dict[tuple[str | None, ...], dict[str, object]]:
    """Rows by key, without what depends on timing."""
    return {(r.workflow, r.machine, r.source): r.model_dump() for r in rows}


def count(db: Path) -> int:
    try:
        return int(table(db, "SELECT COUNT(*) FROM results")[0][0])
    except Exception:  # not created yet, or a table not there yet
        return 0


@pytest.mark.slow
def test_sigkill_midway_then_rerun_gives_one_good_row_per_key(tmp_path: Path) -> None:
    suite = small_suite(tmp_path / "suite.json")
    killed, whole = tmp_path / "killed.sqlite", tmp_path / "whole.sqlite"
    args = ["--jobs", "2", "--chunk", "1"]
    # its own session, so that SIGKILL takes the workers too, as `kill -9` of a job would
    process = subprocess.Popen(
        command(suite, killed) + args, env=env(), start_new_session=True, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and count(killed) < ROWS // 4:
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)
    partial = count(killed)
    assert 0 < partial < ROWS, "the run was not killed midway"

    rerun = subprocess.run(
        command(suite, killed) + args, env=env(), capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f"resuming: {partial} row{'s' * (partial > 1)} already" in rerun.stderr

    keys = table(killed, "SELECT workflow, machine_name, method, COUNT(*) FROM results GROUP BY 1, 2, 3")
    assert len(keys) == ROWS and all(n == 1 for *_, n in keys)
    assert table(killed, "PRAGMA integrity_check") == [("ok",)]
    for gap, safe, text in table(killed, "SELECT gap, safe, row FROM results"):
        row = json.loads(text)  # every row whole and consistent with its columns
        assert row["gap"] == gap and row["safe"] == bool(safe)

    once = subprocess.run(command(suite, whole) + args, env=env(), capture_output=True, timeout=300)
    assert once.returncode == 0
    assert comparable(read_score_rows(killed)) == comparable(read_score_rows(whole))


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    suite, db = small_suite(tmp_path / "suite.json"), tmp_path / "r.sqlite"
    process = subprocess.Popen(
        [*command(suite, db), "--jobs", "2", "--chunk", "1"], env=env(), stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and count(db) < ROWS // 4:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    kept = count(db)
    assert 0 < kept < ROWS
    assert f"Interrupted: {kept} rows kept in {db}; run the same command again to resume" in err
    assert "Traceback" not in err
