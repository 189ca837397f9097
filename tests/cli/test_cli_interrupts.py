"""Ctrl-C, SIGTERM and kill -9 on real ``peakopt`` processes: quiet exits, no orphaned workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner
from paths import J30
from stress_helpers import env

from peakopt.campaign import executors
from peakopt.campaign.executors import Executor, Where
from peakopt.cli.main import cli

# every test here interrupts or kills real command processes and their workers
pytestmark = pytest.mark.slow

#: Solved in a fraction of a second, then one that keeps a worker busy for a minute or more.
QUICK, HARD = str(J30 / "j301_1.sm"), str(J30 / "j3029_3.sm")

#: What an interrupted run must never print.
NOISE = ("Traceback", "Exception ignored", "Error", "terminate called")


@contextmanager
def peakopt(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], Callable[[], str]]]:
    """A ``peakopt`` process in its own session (as a terminal's job), and a reader of its stderr."""
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "peakopt.cli", *args], stderr=err, env=env(), start_new_session=True
        )
    try:
        yield process, lambda: log.read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_for(condition: Callable[[], bool], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def workers(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    return psutil.Process(process.pid).children(recursive=True)


@pytest.mark.parametrize(
    ("where", "signal_name", "code"),
    [
        (["--jobs", "2"], "SIGINT", 130),
        (["--jobs", "2"], "SIGTERM", 143),
        (["--dask-local", "2"], "SIGINT", 130),
    ],
    ids=["ctrl-c", "sigterm", "ctrl-c on dask"],
)
def test_an_interrupted_solve_is_quiet_and_keeps_its_records(
    tmp_path: Path, where: list[str], signal_name: str, code: int
) -> None:
    out = tmp_path / "refs.jsonl"
    out.write_bytes(b"the previous run's records\n\xff")
    args = ["solve", QUICK, HARD, *where, "--workers", "1", "--time-limit", "120", "-o", str(out), "--fresh"]
    with peakopt(tmp_path, *args) as (process, stderr):
        wait_for(lambda: lines(tmp_path / "refs.jsonl.partial") >= 1)
        # Ctrl-C in a terminal reaches the whole process group, workers included
        os.killpg(process.pid, getattr(signal, signal_name))
        process.wait(timeout=60)
        err = stderr()
    assert process.returncode == code, err
    assert not any(noise in err for noise in NOISE), err
    assert "Interrupted: 1 finished records kept" in err and "run it again without --fresh to resume" in err
    assert out.read_bytes() == b"the previous run's records\n\xff"
    assert lines(tmp_path / "refs.jsonl.partial") == 1


def test_an_interrupted_stress_is_quiet(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    args = ["stress", QUICK, HARD, "-m", "serial", "--db", str(db), "--jobs", "2", "--time-limit", "120"]
    with peakopt(tmp_path, *args) as (process, stderr):
        wait_for(lambda: len(workers(process)) == 2)
        time.sleep(2.0)  # the optima are being solved
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)
        err = stderr()
    assert process.returncode == 130, err
    assert not any(noise in err for noise in NOISE), err
    assert "Interrupted: " in err and "run the same command again to resume" in err


@pytest.mark.parametrize(
    ("command", "where"),
    [("solve", "--jobs"), ("stress", "--jobs"), ("solve", "--dask-local")],
    ids=["solve", "stress", "solve on dask"],
)
def test_kill_9_of_the_parent_ends_its_workers_and_jobs_stop_at_the_items(
    tmp_path: Path, command: str, where: str
) -> None:
    # two items and 8 workers asked for: two started, not eight
    common = [QUICK, HARD, where, "8", "--workers", "1", "--time-limit", "120"]
    if command == "solve":
        args = ["solve", *common, "-o", str(tmp_path / "refs.jsonl")]
    else:
        args = ["stress", *common, "-m", "serial", "--db", str(tmp_path / "r.sqlite")]
    with peakopt(tmp_path, *args) as (process, _):
        if command == "solve":  # the workers are up and running: the quick record is in
            wait_for(lambda: lines(tmp_path / "refs.jsonl.partial") >= 1)
        wait_for(lambda: len(workers(process)) >= 2)
        time.sleep(1.0)
        found = workers(process)
        if where == "--jobs":  # (Dask adds multiprocessing's resource tracker)
            assert len(found) == 2
        os.kill(process.pid, signal.SIGKILL)  # as the OOM killer does
        process.wait(timeout=10)
        _, alive = psutil.wait_procs(found, timeout=10)
    assert alive == []


def test_jobs_above_the_items_start_no_more_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    started: list[Where] = []
    open_executor = executors.open_executor

    def recording(where: Where) -> Executor:
        started.append(where)
        return open_executor(where)

    # the command line imports it where it opens one (its --help loads no campaign)
    monkeypatch.setattr(executors, "open_executor", recording)
    runner = CliRunner()
    assert runner.invoke(cli, ["solve", "bundled:refund", "--jobs", "8", "--json"]).exit_code == 0
    db = str(tmp_path / "r.sqlite")
    assert runner.invoke(cli, ["stress", "bundled:refund", "-m", "serial", "--db", db]).exit_code == 0
    assert runner.invoke(cli, ["solve", "bundled:refund", "--dask-local", "3", "--json"]).exit_code == 0
    assert started == [Where(jobs=1), Where(jobs=1), Where(dask_local=1)]
    assert Where(scheduler="tcp://x:1").at_most(1) == Where(scheduler="tcp://x:1")  # a cluster as it is


def test_a_second_ctrl_c_ends_the_clean_up_at_once(tmp_path: Path) -> None:
    out = tmp_path / "refs.jsonl"
    args = [
        "solve",
        QUICK,
        HARD,
        "--dask-local",
        "1",
        "--workers",
        "1",
        "--time-limit",
        "120",
        "-o",
        str(out),
    ]
    with peakopt(tmp_path, *args) as (process, stderr):
        wait_for(lambda: lines(tmp_path / "refs.jsonl.partial") >= 1)
        # stopping a Dask cluster takes seconds: a second Ctrl-C cuts it short. Signals that
        # arrive before the first is handled count as one, so press again until it stops.
        end = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < end:
            os.kill(process.pid, signal.SIGINT)
            time.sleep(0.2)
        process.wait(timeout=30)
        time.sleep(1.0)  # what a helper process (multiprocessing's resource tracker) says comes later
        err = stderr()
    assert process.returncode == 130 and "Traceback" not in err, err
    assert err.splitlines()[-1] == "Interrupted again: stopped at once"
    assert "resource_tracker" not in err and "leaked" not in err, err
    assert lines(tmp_path / "refs.jsonl.partial") == 1 and not out.exists()
