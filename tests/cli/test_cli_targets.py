"""Inputs as every command reads them: directories of input files, pipes, each file on its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import jsonl
from click.testing import CliRunner
from paths import J30, PATTERSON

from peakopt.campaign.store import read_score_rows
from peakopt.cli.main import cli

PEAKOPT = [sys.executable, "-m", "peakopt.cli"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def psplib_folder(tmp_path: Path) -> Path:
    """Two j30 instances beside PSPLIB's table of optima, as the PSPLIB archive has them."""
    folder = tmp_path / "j30"
    folder.mkdir()
    for name in ("j301_2.sm", "j301_1.sm", "j30opt.sm"):
        shutil.copy(J30 / name, folder / name)
    return folder


@pytest.fixture
def generated(tmp_path: Path) -> Path:
    """What ``peakopt generate -o DIR`` writes: one suite file per stress instance."""
    folder = tmp_path / "stress"
    code, _, err = run("generate", "--tasks", "8", "--kind", "rcpsp", "--count", "3", "-o", str(folder))
    assert code == 0, err
    return folder


def test_validate_reads_every_input_file_of_a_folder(psplib_folder: Path, generated: Path) -> None:
    code, out, err = run("validate", str(psplib_folder), str(generated))
    assert code == 0, err
    assert [line.split(":")[0] for line in out.splitlines()] == [
        f"OK {psplib_folder / 'j301_1.sm'}",
        f"OK {psplib_folder / 'j301_2.sm'}",
        *(f"OK {generated / f'rcpsp-n8-s{seed}.json'}" for seed in range(3)),
    ]
    assert err.count("Warning:") == 1 and "j30opt.sm: PSPLIB result tables" in err


@pytest.mark.slow
def test_validate_the_whole_j30_folder() -> None:
    code, out, _ = run("validate", "--json", str(J30))
    assert code == 0
    assert len(out.splitlines()) == 480 and all(json.loads(line)["ok"] for line in out.splitlines())


@pytest.mark.slow
def test_a_psplib_folder_feeds_solve_schedule_score_and_plot(tmp_path: Path, psplib_folder: Path) -> None:
    refs, schedules = tmp_path / "refs.jsonl", tmp_path / "asap.jsonl"
    code, _, err = run("solve", str(psplib_folder), "--time-limit", "10", "-o", str(refs))
    assert code == 0, err
    optima = {r["workflow"]: r["makespan"] for r in map(json.loads, refs.read_text().splitlines())}
    assert optima == {"j301_1": 43, "j301_2": 47}  # each file on its own machine (both named psplib)
    code, _, err = run("schedule", str(psplib_folder), "--method", "serial", "-o", str(schedules))
    assert code == 0, err
    code, out, err = run(
        "score", str(psplib_folder), "--schedules", str(schedules), "-r", str(refs), "--json"
    )
    assert code == 0, err
    rows = jsonl(out)
    assert [(r["workflow"], r["valid"], r["safe"]) for r in rows] == [
        ("j301_1", True, True),
        ("j301_2", True, True),
    ]
    assert all(r["gap"] > 0 for r in rows)
    code, _, err = run(
        "plot", str(psplib_folder), "--workflow", "j301_2", "--method", "asap", "-o", str(tmp_path / "g.svg")
    )
    assert code == 0, err
    code, out, err = run("prompt", str(psplib_folder))
    assert code == 0, err
    assert [json.loads(line)["workflow"] for line in out.splitlines()] == ["j301_1", "j301_2"]


def test_generated_folders_feed_solve_and_stress(tmp_path: Path, generated: Path) -> None:
    refs = tmp_path / "refs.jsonl"
    code, _, err = run("solve", str(generated), "--time-limit", "10", "-o", str(refs))
    assert code == 0, err
    assert len(refs.read_text().splitlines()) == 3
    db = tmp_path / "runs.sqlite"
    code, _, err = run("stress", str(generated), "-m", "asap,serial", "--db", str(db), "--time-limit", "10")
    assert code == 0, err
    assert len(read_score_rows(db)) == 6


@pytest.mark.parametrize("command", [["validate"], ["solve"], ["schedule", "--method", "asap"], ["prompt"]])
def test_an_empty_folder_is_an_error(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "notes.txt").write_text("not an input")
    code, _, err = run(command[0], str(tmp_path), *command[1:])
    assert code == 1
    assert (
        err.strip()
        == f"Error: {tmp_path}: is a directory without input files (.json, .jsonl, .ndjson, .sm, .rcp)"
    )


@pytest.mark.slow
def test_process_substitution_works_for_every_format(tmp_path: Path) -> None:
    machine = json.dumps({"name": "m", "capacity": {"R1": 20, "R2": 20, "R3": 20, "R4": 20, "cpu": 4}})
    script = (
        f"{' '.join(PEAKOPT)} schedule <(cat {J30 / 'j301_1.sm'}) <(cat {PATTERSON / 'pat1.rcp'})"
        f" --machine <(echo '{machine}') --method serial --json"
        f" && {' '.join(PEAKOPT)} validate <(cat {J30 / 'j301_1.sm'}) /dev/stdin < {PATTERSON / 'pat2.rcp'}"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    schedules = [json.loads(line) for line in lines[:-2]]
    assert [len(s["starts"]) for s in schedules] == [30, 12]  # the machine file was read once, for both
    assert {s["machine"] for s in schedules} == {"m"}
    assert lines[-2].endswith("1 workflow (30 tasks), 1 machine") and lines[-1].startswith("OK /dev/stdin")
