"""``peakopt profile`` and ``peakopt run`` through click's CliRunner, and interrupted in a real process."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from cli_helpers import run
from runtime_helpers import shell

from peakopt.runtime.cgroups import detect
from peakopt.runtime.trace import load_trace

NOOP = [sys.executable, "-c", "pass"]


def suite(tmp_path: Path, tasks: list[dict[str, object]], capacity: dict[str, float] | None = None) -> Path:
    path = tmp_path / "wf.json"
    machines = [{"name": "box", "capacity": capacity or {"cpu": 2, "memory_mb": 300}}]
    path.write_text(json.dumps({"machines": machines, "workflows": [{"id": "w", "tasks": tasks}]}))
    return path


def step(
    name: str, seconds: float, memory: float, command: str, after: tuple[str, ...] = ()
) -> dict[str, object]:
    return {
        "id": name,
        "duration": seconds,
        "demand": {"memory_mb": memory},
        "depends_on": list(after),
        "meta": {"command": command},
    }


# --- profile ------------------------------------------------------------------------------


def test_profile_prints_the_task_and_says_how_it_measured() -> None:
    code, out, err = run("profile", "--id", "noop", "--interval", "0.02", "--", *NOOP)
    assert code == 0, err
    task = json.loads(out)
    assert task["id"] == "noop" and task["meta"]["profile"]["interval"] == 0.02
    accounting = task["meta"]["profile"]["accounting"]
    assert accounting == (detect().reason if detect().parent else "psutil")  # cgroup v1 on this machine
    assert "noop: " in err and f"{accounting}, sampled every 0.02 s" in err  # the note says which


def test_profile_takes_the_commands_own_options_without_a_double_dash(tmp_path: Path) -> None:
    out = tmp_path / "task.json"
    code, _, err = run("profile", "-o", str(out), sys.executable, "-c", "import sys; sys.exit(0)")
    assert code == 0, err
    assert json.loads(out.read_text())["id"] == Path(sys.executable).name
    assert f"wrote {out}: task" in err


def test_profile_fills_a_step_of_a_workflow_in_place(tmp_path: Path) -> None:
    path = suite(tmp_path, [step("a", 9, 1, "true"), step("b", 9, 1, "true", ("a",))])
    before = json.loads(path.read_text())
    code, _, err = run("profile", "--workflow", str(path), "--step", "b", "--", *NOOP)
    assert code == 0, err
    after = json.loads(path.read_text())
    b = after["workflows"][0]["tasks"][1]
    assert b["id"] == "b" and b["depends_on"] == ["a"] and "duration" not in b and b["profile"]
    assert b["meta"]["command"] == " ".join(NOOP) and "profile" in b["meta"]
    assert after["workflows"][0]["tasks"][0] == before["workflows"][0]["tasks"][0]
    assert after["machines"] == before["machines"]
    assert run("validate", str(path))[0] == 0


def test_profile_errors_leave_the_workflow_byte_for_byte(tmp_path: Path) -> None:
    path = suite(tmp_path, [step("a", 9, 1, "true")])
    text = path.read_bytes()
    code, _, err = run("profile", "--workflow", str(path), "--step", "zz", "--", *NOOP)
    assert (
        code == 1
        and err.strip().splitlines()[-1] == f"Error: {path}: step 'zz': no step of that id (steps: a)"
    )
    failing = [sys.executable, "-c", "raise SystemExit(4)"]
    code, _, err = run("profile", "--workflow", str(path), "--step", "a", "--", *failing)
    assert code == 1 and "exited with 4 on run 1 of 1" in err and "Traceback" not in err
    assert path.read_bytes() == text
    code, _, err = run("profile", "--", "no-such-program-y")
    assert code == 1 and err.strip().splitlines()[-1] == (
        "Error: command 'no-such-program-y' cannot be run: No such file or directory"
    )


#: What a profiled command prints (a shell line), and what of it must reach stderr.
PRINTS = [
    ("true", ""),
    ("echo hello", "hello"),
    ("printf '{\"id\": 1'", '{"id": 1'),  # no newline, and JSON-like
    (f"{sys.executable} -c \"print('x' * 200000)\"", "x" * 1000),  # more than a pipe holds
    ("printf '\\377\\000'", ""),  # bytes that are not text
    ("echo oops >&2", "oops"),
    ("(sleep 0.3; echo late) & echo early", "early"),  # a child that writes after the command ends
]


@pytest.mark.slow
@pytest.mark.parametrize("interval", ["0.05", "2"])
@pytest.mark.parametrize(("line", "shown"), PRINTS, ids=[p[0][:20] for p in PRINTS])
def test_profile_keeps_the_commands_output_out_of_its_json(interval: str, line: str, shown: str) -> None:
    argv = ["profile", "--interval", interval, "--id", "t", "--", "sh", "-c", line]
    done = subprocess.run(
        [sys.executable, "-m", "peakopt.cli", *argv],
        capture_output=True,
        env=_env(),
        timeout=120,
        check=False,
    )
    err = done.stderr.decode(errors="replace")
    assert done.returncode == 0, err
    task = json.loads(done.stdout)  # the task alone: nothing of the command's
    assert task["id"] == "t" and task["meta"]["command"] == shlex.join(["sh", "-c", line])
    assert shown in err


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_killed_profile_takes_the_commands_processes_with_it(signum: signal.Signals) -> None:
    token = f"{100 + time.time() % 1:.9f}"  # the sleeps' argument: found wherever they were reparented
    line = f"sleep {token} & setsid sleep {token} & sleep {token}; wait"
    process = subprocess.Popen(
        [sys.executable, "-m", "peakopt.cli", "profile", "--", "sh", "-c", line],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
        start_new_session=True,
    )

    def sleeps() -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if p.cmdline() == ["sleep", token] and p.status() != psutil.STATUS_ZOMBIE:
                    found.append(p)
        return found

    try:
        deadline = time.monotonic() + 60
        while len(sleeps()) < 3:
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.05)
        os.kill(process.pid, signum)
        process.wait(timeout=30)
        deadline = time.monotonic() + 12  # the clean-up's grace is 2 s
        while sleeps() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = sleeps()
        assert not left, left
    finally:
        for p in sleeps():
            p.kill()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_profile_usage_errors() -> None:
    assert run("profile", "--step", "a", "--", "true")[0] == 2
    assert run("profile", "--runs", "0", "--", "true")[0] == 2
    assert run("profile")[0] == 2


# --- run ----------------------------------------------------------------------------------


def test_run_writes_the_trace_and_a_safe_verdict(tmp_path: Path) -> None:
    path = suite(tmp_path, [step(n, 0.2, 200, "sleep 0.2") for n in "abc"])
    trace_path = tmp_path / "trace.json"
    code, out, err = run("run", str(path), "--machine", "box", "--policy", "asap", "-o", str(trace_path))
    assert code == 0, err
    assert out == ""
    lines = err.strip().splitlines()
    assert lines[-2] == f"wrote {trace_path}: trace of 3 steps"
    assert lines[-1].startswith("safe: avoidable cva 0, makespan ") and lines[-1].endswith(
        "under asap (3 ok)"
    )
    trace = load_trace(trace_path)
    spans = sorted((s.start, s.end) for s in trace.steps)
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(spans))  # 200 + 200 > 300: one at a time


def test_run_unguarded_asap_is_judged_unsafe(tmp_path: Path) -> None:
    path = suite(tmp_path, [step(n, 0.2, 200, "sleep 0.2") for n in "ab"])
    code, out, err = run("run", str(path), "--policy", "asap", "--no-guard", "--json")
    assert code == 0, err
    assert json.loads(out)["guarded"] is False
    assert err.strip().splitlines()[-1].startswith("UNSAFE: avoidable cva ")


def test_a_failed_step_writes_the_trace_then_exits_1(tmp_path: Path) -> None:
    path = suite(
        tmp_path, [step("a", 0.1, 1, "exit 3"), step("b", 0.1, 1, "true", ("a",)), step("c", 0.1, 1, "true")]
    )
    trace_path = tmp_path / "trace.json"
    code, _, err = run("run", str(path), "-o", str(trace_path))
    assert code == 1
    assert err.strip().splitlines()[-1] == "Error: step 'a' failed (exited with 3); 1 step skipped"
    assert [s.status for s in load_trace(trace_path).steps] == ["failed", "skipped", "ok"]


def test_run_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bare.json"
    path.write_text(
        json.dumps(
            {
                "machines": [{"name": "box", "capacity": {"cpu": 1}}],
                "workflows": [{"id": "w", "tasks": [{"id": "a", "duration": 1}]}],
            }
        )
    )
    code, _, err = run("run", str(path))
    assert code == 1 and err.strip().splitlines() == [
        "Error: workflow 'w': step 'a' has no command "
        "(give meta.command: a shell line or a list of arguments)"
    ]
    assert run("run", str(path), "--command", "a=true")[0] == 0
    code, _, err = run("run", str(path), "--policy", "no-such-policy", "--command", "a=true")
    assert code == 2 and "unknown method 'no-such-policy'" in err and "or robust, optimal" in err
    assert run("run", str(path), "--command", "zz=true")[0] == 2
    assert run("run", str(path), "--command", "nothing")[0] == 2


def steps(pid: int) -> list[psutil.Process]:
    """The processes of the steps of the controller ``pid`` (its descendants but its reaper)."""
    found = []
    for process in psutil.Process(pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "peakopt.runtime.reaper" not in process.cmdline():
                found.append(process)
    return found


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONWARNINGS": "ignore"}


@pytest.mark.slow
def test_ctrl_c_kills_every_step_and_leaves_the_trace_file_as_it_was(tmp_path: Path) -> None:
    line = shell((20, 60, 0))  # a child holding 20 MiB for a minute
    path = suite(tmp_path, [step(n, 60, 10, f"{line} & {line} & wait") for n in "ab"])
    trace_path = tmp_path / "trace.json"
    trace_path.write_text("old\n")
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "peakopt.cli", "run", str(path), "-o", str(trace_path)],
            stderr=err,
            env=_env(),
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while len(steps(process.pid)) < 6:  # 2 shells, 4 children
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        tree = steps(process.pid)
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=30) == 130, log.read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    alive = [p for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not alive, (alive, log.read_text())
    assert trace_path.read_text() == "old\n"
    text = log.read_text()
    assert text.strip().splitlines()[-1] == "Interrupted" and "Traceback" not in text
