"""Every command that writes: its output checked before the work, locked, and replaced only at the end."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from project_root import ROOT
from stress_helpers import env

from peakopt.cli.main import cli
from peakopt.cli.outputs import Output
from peakopt.instances import load
from peakopt.instances.native import dump, replacing

OLD = "what was there before\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """An input suite, schedules, plans and scores of it, and a catalog, in ``tmp_path/in``."""
    folder = tmp_path / "in"
    folder.mkdir()
    suite = folder / "suite.json"
    suite.write_text(json.dumps(dump(load("bundled:refund"))))
    answers = folder / "answers.jsonl"
    starts = {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}
    answers.write_text(json.dumps({"workflow": "refund", "source": "x", "starts": starts}) + "\n")
    plans = folder / "plans.jsonl"
    plans.write_text(json.dumps({"workflow": "refund", "source": "x", "edges": []}) + "\n")
    scores = folder / "scores.jsonl"
    assert run("score", str(suite), "-s", str(answers), "-o", str(scores))[0] == 0
    catalog = folder / "catalog.json"
    shutil.copy(ROOT / "instances" / "data" / "catalog" / "tools.json", catalog)
    return {"suite": suite, "answers": answers, "plans": plans, "scores": scores, "catalog": catalog}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


# name -> (the command line for output OUT, the input it reads that can stand for OUT, suffix)
Line = Callable[[dict[str, Path], str], list[str]]
WRITERS: dict[str, tuple[Line, str, str]] = {
    # --fresh: a rerun of solve continues a reference file, and OLD is not one (test_campaign_jsonl)
    "solve": (lambda f, o: ["solve", str(f["suite"]), "-o", o, "--fresh"], "suite", ".jsonl"),
    "schedule": (lambda f, o: ["schedule", str(f["suite"]), "-m", "asap", "-o", o], "suite", ".jsonl"),
    "score": (lambda f, o: ["score", str(f["suite"]), "-s", str(f["answers"]), "-o", o], "answers", ".jsonl"),
    "plan-score": (
        lambda f, o: ["plan-score", "-t", str(f["suite"]), "-p", str(f["plans"]), "-o", o],
        "plans",
        ".jsonl",
    ),
    "prompt": (lambda f, o: ["prompt", str(f["suite"]), "-o", o], "suite", ".jsonl"),
    "convert": (lambda f, o: ["convert", str(f["suite"]), "-o", o], "suite", ".json"),
    "generate": (
        lambda f, o: [
            "generate",
            "--easy",
            "1",
            "--medium",
            "0",
            "--hard",
            "0",
            "--catalog",
            str(f["catalog"]),
            "-o",
            o,
        ],
        "catalog",
        ".json",
    ),
    "report": (lambda f, o: ["report", str(f["scores"]), "-o", o], "scores", ".html"),
    "plot": (
        lambda f, o: ["plot", str(f["suite"]), "--schedules", str(f["answers"]), "-o", o],
        "answers",
        ".png",
    ),
}


def unwritable(folder: Path) -> Path:
    """A folder no one may create files in (for root too: immutable, else /sys)."""
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root: make it immutable
        subprocess.run(["chattr", "+i", str(folder)], check=False, capture_output=True)
    probe = folder / "probe"
    try:
        probe.touch()
    except OSError:
        return folder
    probe.unlink()
    return Path("/sys")


@contextlib.contextmanager
def cleanup(folder: Path) -> Iterator[None]:
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=False, capture_output=True)
        folder.chmod(0o755)


@pytest.mark.parametrize("name", WRITERS)
def test_a_directory_a_missing_folder_or_an_unwritable_place_is_one_error_line(
    tmp_path: Path, files: dict[str, Path], name: str
) -> None:
    line, _, suffix = WRITERS[name]
    folder = tmp_path / "ro"
    (tmp_path / f"adir{suffix}").mkdir()
    targets = {
        "is a directory": tmp_path / f"adir{suffix}",
        "does not exist": tmp_path / "missing" / f"out{suffix}",
    }
    with cleanup(folder):
        targets["cannot be written"] = unwritable(folder) / f"out{suffix}"
        for rule, target in targets.items():
            if name == "generate" and rule == "is a directory":
                continue  # generate -o DIR writes DIR/suite.json
            # the output is checked first: its error comes even though the input is missing
            args = line({**files, "suite": tmp_path / "absent.json"}, str(target))
            code, _, err = run(*args)
            assert code == 1, (rule, err)
            assert err.count("\n") == 1 and err.startswith(f"Error: -o {target}: ") and rule in err, err


def test_a_worst_dir_that_is_a_file_or_in_a_missing_folder_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text(OLD)
    for target, rule in ((blocker, "is not a directory"), (tmp_path / "no" / "worst", "does not exist")):
        args = ["stress", "absent.json", "-m", "serial", "--db", str(tmp_path / "r.sqlite"), "--worst", "1"]
        code, _, err = run(*args, "--worst-dir", str(target))
        assert code == 1 and err.startswith(f"Error: --worst-dir {target}: ") and rule in err, err
    assert blocker.read_text() == OLD and not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize("name", WRITERS)
def test_an_output_that_is_an_input_is_a_usage_error(files: dict[str, Path], name: str) -> None:
    line, which, _ = WRITERS[name]
    if name == "plot":  # a picture's name: the schedules file given as a .png
        files["answers"] = files["answers"].rename(files["answers"].with_suffix(".png"))
    target = files[which]
    before = target.read_bytes()
    code, _, err = run(*line(files, str(target)))
    assert code == 2 and "is also an input" in err, err
    assert target.read_bytes() == before


def test_a_worst_dir_that_holds_an_input_is_a_usage_error(files: dict[str, Path]) -> None:
    args = ["stress", str(files["suite"]), "-m", "serial", "--db", str(files["suite"].parent / "r.sqlite")]
    code, _, err = run(*args, "--worst", "1", "--worst-dir", str(files["suite"].parent))
    assert code == 2 and "holds the input" in err


@pytest.mark.slow
@pytest.mark.parametrize("name", WRITERS)
def test_a_second_writer_of_the_same_output_refuses_at_once(
    tmp_path: Path, files: dict[str, Path], name: str
) -> None:
    line, _, suffix = WRITERS[name]
    target = tmp_path / f"out{suffix}"
    target.write_text(OLD)
    holder = Output(str(target), "-o")
    holder.check()  # another process's lock: a new open file description conflicts the same
    try:
        code, _, err = run(*line(files, str(target)))
    finally:
        holder.close()
    assert code == 1 and f"another process (pid {os.getpid()}) is writing it" in err, err
    assert target.read_text() == OLD
    assert run(*line(files, str(target)))[0] == 0  # once let go, the output is free
    assert not holder.lock_path.exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", WRITERS)
def test_a_successful_run_replaces_the_file_and_leaves_nothing_beside_it(
    tmp_path: Path, files: dict[str, Path], name: str
) -> None:
    line, _, suffix = WRITERS[name]
    target = tmp_path / f"out{suffix}"
    target.write_text(OLD)
    target.chmod(0o640)
    code, _, err = run(*line(files, str(target)))
    assert code == 0, err
    assert target.read_bytes() != OLD.encode() and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", target.name]  # no lock, no temp file


def test_a_failed_run_leaves_the_old_file(tmp_path: Path, files: dict[str, Path]) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text(OLD)
    code, _, err = run("schedule", str(files["suite"]), "-m", "asap,stress_helpers:raises", "-o", str(target))
    assert code == 1 and "plug-in bug" in err
    assert target.read_text() == OLD


def test_a_symbolic_link_is_followed_and_kept(tmp_path: Path, files: dict[str, Path]) -> None:
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text(OLD)
    link.symlink_to(real)
    assert run("convert", str(files["suite"]), "-o", str(link))[0] == 0
    assert link.is_symlink() and load(real).workflows[0].id == "refund"


def test_a_device_is_written_in_place(files: dict[str, Path]) -> None:
    assert run("convert", str(files["suite"]), "-o", os.devnull)[0] == 0
    assert run("solve", str(files["suite"]), "-o", os.devnull)[0] == 0
    assert Path(os.devnull).is_char_device()


def test_the_lock_is_taken_on_the_file_that_is_in_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a holder letting go removes the lock file between our open and our flock: lock the new one
    output = Output(str(tmp_path / "out.jsonl"), "-o")
    flock = fcntl.flock
    calls = []

    def racing(handle: int, how: int) -> None:
        calls.append(handle)
        if len(calls) == 1:
            output.lock_path.unlink()
            output.lock_path.write_text("")
        flock(handle, how)

    monkeypatch.setattr(fcntl, "flock", racing)  # the module peakopt.instances.locks calls it in
    output.check()
    try:
        assert len(calls) == 2
        assert os.fstat(calls[-1]).st_ino == output.lock_path.stat().st_ino
    finally:
        output.close()


def test_an_interrupted_write_leaves_the_old_file_byte_for_byte(tmp_path: Path) -> None:
    target = tmp_path / "big.json"
    target.write_bytes(b"\x00old bytes\xff" * 1000)
    before = target.read_bytes()
    with pytest.raises(KeyboardInterrupt), replacing(target) as temp:
        temp.write_text("half of the new")
        raise KeyboardInterrupt
    assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["big.json"]


@pytest.mark.slow
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_an_interrupted_command_leaves_the_old_file_byte_for_byte(tmp_path: Path, signal_name: str) -> None:
    import signal
    import time

    target = tmp_path / "big.json"
    target.write_text(OLD)
    command = [sys.executable, "-m", "peakopt.cli", "generate", "--tasks", "200000", "--width", "400"]
    process = subprocess.Popen(
        [*command, "-o", str(target)], stderr=subprocess.PIPE, text=True, env=env(), start_new_session=True
    )
    lock = tmp_path / ".big.json.lock"
    deadline = time.monotonic() + 60
    while not lock.exists() and time.monotonic() < deadline:  # the output is claimed: the work runs
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(process.pid, getattr(signal, signal_name))
    _, err = process.communicate(timeout=60)
    code = {"SIGINT": 130, "SIGTERM": 143}[signal_name]
    assert process.returncode == code, err
    assert err.strip().splitlines()[-1] == "Interrupted" and "Traceback" not in err
    assert target.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]


@pytest.mark.parametrize("name", [*WRITERS, "stress"])
def test_every_writer_says_in_its_help_what_happens_to_an_existing_file(name: str) -> None:
    text = " ".join(CliRunner().invoke(cli, [name, "--help"]).output.split())
    assert "in one step" in text, text


@pytest.mark.parametrize("name", WRITERS)
def test_a_writer_ends_with_one_line_saying_what_it_wrote_where(
    tmp_path: Path, files: dict[str, Path], name: str
) -> None:
    line, _, suffix = WRITERS[name]
    target = tmp_path / f"out{suffix}"
    code, _, err = run(*line(files, str(target)))
    assert code == 0, err
    said = [text for text in err.splitlines() if text.startswith("wrote ")]
    assert said == [err.splitlines()[-1]] and said[0].startswith(f"wrote {target}: "), err
    code, _, err = run(*line(files, str(target)), "--quiet")
    assert code == 0 and "wrote " not in err, err
