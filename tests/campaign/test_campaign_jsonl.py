"""``peakopt solve -o``: records streamed to REFS.jsonl.partial, a rerun resumes from both, damaged files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.instances.native import dump
from peakopt.models import SolveResult


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three one-task workflows on one machine: solved in milliseconds."""
    path = tmp_path_factory.mktemp("suite") / "suite.json"
    workflows = [
        {"id": f"w{i}", "tasks": [{"id": "a", "duration": i + 1, "demand": {"cpu": 1}}]} for i in range(3)
    ]
    path.write_text(json.dumps({"machines": [{"name": "m", "capacity": {"cpu": 1}}], "workflows": workflows}))
    return path


@pytest.fixture(scope="module")
def lines(suite: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The three records of the suite, as ``solve -o`` writes them."""
    out = tmp_path_factory.mktemp("refs") / "refs.jsonl"
    assert run("solve", str(suite), "-o", str(out))[0] == 0
    return sorted(out.read_text().splitlines(keepends=True))


def workflows(path: Path) -> list[str]:
    return sorted(SolveResult.model_validate_json(line).workflow for line in path.read_text().splitlines())


def test_resume_keeps_every_complete_record_after_a_damaged_line(
    tmp_path: Path, suite: Path, lines: list[str]
) -> None:
    out = tmp_path / "refs.jsonl"
    out.write_text(lines[0] + '{"workflow": "w1", "mach\n' + lines[2] + '{"workflow": "w1"')
    code, _, err = run("solve", str(suite), "-o", str(out))
    assert code == 0, err
    assert "line 2 is damaged" in err and "dropped an incomplete last record (line 4" in err
    assert "2 records already" in err and "1 solve to go" in err
    assert workflows(out) == ["w0", "w1", "w2"]
    assert out.read_text().splitlines(keepends=True)[:2] == [lines[0], lines[2]]  # kept as they were


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"workflow": "w0", "source": "x", "starts": {"a": 0}}).encode() + b"\n",  # schedules
        json.dumps(dump(load("bundled:refund"))).encode() + b"\n",  # a suite
        b"not json\nat all\n",
        b"\x89PNG\r\n\x1a\n\x00\xff",
    ],
    ids=["schedules", "suite", "text", "binary"],
)
def test_resume_refuses_a_file_that_is_not_a_reference_file_untouched(
    tmp_path: Path, suite: Path, lines: list[str], content: bytes
) -> None:
    out = tmp_path / "refs.jsonl"
    out.write_bytes(content)
    before = out.read_bytes()
    code, _, err = run("solve", str(suite), "-o", str(out))
    assert code == 1 and "is not a reference file" in err and "nothing was changed" in err, err
    assert "--fresh replaces it" in err
    assert err.count("Error:") == 1
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["refs.jsonl"]


def test_resume_continues_from_the_file_and_its_partial(
    tmp_path: Path, suite: Path, lines: list[str]
) -> None:
    out = tmp_path / "refs.jsonl"
    partial = tmp_path / "refs.jsonl.partial"
    other = json.loads(lines[0]) | {"workflow": "elsewhere"}  # not in the inputs: still kept
    out.write_text(lines[0] + json.dumps(other) + "\n")
    newer = json.loads(lines[0]) | {"seconds": 123.0}
    partial.write_text(lines[1] + json.dumps(newer) + "\n")
    code, _, err = run("solve", str(suite), "-o", str(out))
    assert code == 0, err
    assert "3 records already" in err and "1 solve to go" in err
    assert workflows(out) == ["elsewhere", "w0", "w1", "w2"] and not partial.exists()
    kept = {r.workflow: r for r in map(SolveResult.model_validate_json, out.read_text().splitlines())}
    assert kept["w0"].seconds == 123.0  # the side file's record is the newer one


def test_a_partial_left_by_an_interrupted_run_is_continued_and_only_fresh_drops_it(
    tmp_path: Path, suite: Path, lines: list[str]
) -> None:
    out, partial = tmp_path / "refs.jsonl", tmp_path / "refs.jsonl.partial"
    partial.write_text(lines[0])
    code, _, err = run("solve", str(suite), "-o", str(out))
    assert code == 0 and "1 record already" in err and "2 solves to go" in err, err
    assert out.read_text().splitlines(keepends=True)[0] == lines[0] and not partial.exists()
    partial.write_text(lines[0])
    code, _, err = run("solve", str(suite), "-o", str(out), "--fresh")
    assert code == 0 and "resuming" not in err and "wrote " in err, err
    assert workflows(out) == ["w0", "w1", "w2"] and not partial.exists()


def test_the_old_resume_flag_is_a_hidden_alias_of_the_default(
    tmp_path: Path, suite: Path, lines: list[str]
) -> None:
    out = tmp_path / "refs.jsonl"
    out.write_text(lines[0])
    code, _, err = run("solve", str(suite), "-o", str(out), "--resume")
    assert code == 0 and "Warning: --resume is what a rerun does now" in err and "2 solves to go" in err
    assert "--resume" not in run("solve", "--help")[1]


def test_resume_with_everything_done_solves_nothing(tmp_path: Path, suite: Path, lines: list[str]) -> None:
    out = tmp_path / "refs.jsonl"
    out.write_text("".join(lines))
    code, _, err = run("solve", str(suite), "-o", str(out))
    assert code == 0 and "0 solves to go" in err
    assert sorted(out.read_text().splitlines(keepends=True)) == lines


@pytest.mark.parametrize("held", [1, 2, 3])
def test_resuming_is_a_note_in_correct_english_not_a_warning(
    tmp_path: Path, suite: Path, lines: list[str], held: int
) -> None:
    # the normal resume path is what a rerun does: not a warning, and "1 solve", "1 record"
    out = tmp_path / "refs.jsonl"
    out.write_text("".join(lines[:held]))
    code, _, err = run("solve", str(suite), "-o", str(out))
    left = 3 - held
    records = "1 record" if held == 1 else f"{held} records"
    solves = "1 solve" if left == 1 else f"{left} solves"
    assert code == 0 and f"resuming: {records} already in {out}, {solves} to go" in err, err
    assert "Warning: resuming" not in err
