"""A ``peakopt run`` killed at random moments by SIGINT, SIGTERM or SIGKILL: no step process survives it.

Random workflows of real short subprocesses (``sleep``, shells with children and grandchildren,
one that leaves its session with ``setsid``, argument vectors) run under a real ``peakopt run``
process, which is killed at a random moment: before the steps start, while they run, or after
the run could have ended. Every process of the run carries a marker in its environment (the test
sets it on the controller; children inherit it), so whatever the controller leaves behind is
found, whoever its parent is now. Afterwards no marked process is left, and the trace file that
was there before is either byte for byte as it was or replaced by a complete trace.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from peakopt.runtime.trace import load_trace

pytestmark = pytest.mark.slow

#: The environment variable that marks every process of one run of the test.
MARK = "PEAKOPT_KILL_TEST"
#: Where a command names the run's token (replaced by each example's own).
TOKEN = "@TOKEN@"
#: What was in the trace file before the run (not a trace: only an unchanged file matches it).
OLD = b"an earlier trace \x00\xff\n"
#: How long a killed run's processes may take to be gone (the clean-up's grace is 2 s); a step
#: of :data:`LONG` seconds outlives it unless it is ended.
SETTLE, LONG = 12.0, 120.0


def command(kind: str, seconds: float) -> str | list[str]:
    """A step's command of ``kind``, sleeping ``seconds`` in each of its processes."""
    t = f"{seconds:g}"
    commands: dict[str, str | list[str]] = {
        "sleep": f"sleep {t}",
        "argv": ["sleep", t],
        "children": f"sleep {t} & sleep {t}; wait",
        "grandchildren": f"sh -c 'sleep {t} & sleep {t}; wait' & sleep {t}; wait",
        "setsid": f"setsid sleep {t} & sleep {t}; wait",
        "missing": ["no-such-program-peakopt", t],
        # no environment (the marker is gone): found by its process group, and by the test by
        # the token its shell's command line ends with
        "clean-env": f"env -i sh -c 'sleep {t}; : {TOKEN}'",
    }
    return commands[kind]


@st.composite
def workflows(draw: st.DrawFn) -> dict[str, Any]:
    """A suite of one workflow of 1-5 steps with random dependencies, on a 2-core machine.

    Some steps end at once, some within the time the run may take, some would run for minutes.
    """
    n = draw(st.integers(1, 5))
    kinds = st.sampled_from(["sleep", "argv", "children", "grandchildren", "setsid", "missing", "clean-env"])
    tasks = []
    for k in range(n):
        after = draw(st.lists(st.sampled_from([f"s{j}" for j in range(k)]), unique=True)) if k else []
        seconds = draw(st.sampled_from([0.05, 0.4, 1.5, LONG]))
        tasks.append(
            {
                "id": f"s{k}",
                "duration": seconds,
                "demand": {"cpu": 1},
                "depends_on": after,
                "meta": {"command": command(draw(kinds), seconds)},
            }
        )
    return {"machines": [{"name": "box", "capacity": {"cpu": 2}}], "workflows": [{"id": "w", "tasks": tasks}]}


def marked(token: str) -> list[psutil.Process]:
    """The live processes (not zombies) whose environment holds ``MARK=token`` or command line ``token``."""
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            ours = process.environ().get(MARK) == token or any(token in a for a in process.cmdline())
            if ours and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
    return found


def steps_started(pid: int) -> bool:
    """Whether the controller ``pid`` has a child running a step (a shell or a sleep)."""
    with contextlib.suppress(psutil.Error):
        return any(p.name() in ("sh", "sleep") for p in psutil.Process(pid).children(recursive=True))
    return False


def settle(token: str) -> list[str]:
    """Wait up to :data:`SETTLE` seconds for the marked processes to end; the command lines of those left."""
    deadline = time.monotonic() + SETTLE
    while (left := marked(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = []
    for process in left:
        with contextlib.suppress(psutil.Error):
            survivors.append(" ".join(process.cmdline()))
            process.kill()  # the test cleans up after a failure too
    return survivors


def check_trace(path: Path, suite: dict[str, Any]) -> None:
    """The file is as it was, or a complete trace of every step."""
    data = path.read_bytes()
    if data == OLD:
        return
    trace = load_trace(path)
    ids = [t["id"] for t in suite["workflows"][0]["tasks"]]
    assert [s.id for s in trace.steps] == ids
    for step in trace.steps:
        assert (step.start is None) == (step.status == "skipped"), step
        assert (step.end is None) == (step.status == "skipped"), step
    assert trace.status == ("ok" if all(s.status == "ok" for s in trace.steps) else "failed")


def hard_case() -> dict[str, Any]:
    """One workflow of every way a process escapes: a grandchild, a new session, no environment."""
    tasks = [
        {"id": f"s{k}", "duration": LONG, "demand": {"cpu": 0.5}, "meta": {"command": command(kind, LONG)}}
        for k, kind in enumerate(["grandchildren", "setsid", "clean-env", "argv"])
    ]
    return {"machines": [{"name": "box", "capacity": {"cpu": 2}}], "workflows": [{"id": "w", "tasks": tasks}]}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
# each example is a real run of seconds: no shrinking (a failure's example is printed as drawn)
@settings(max_examples=4, deadline=None, database=None, phases=(Phase.explicit, Phase.generate))
@given(suite=workflows(), wait_for_steps=st.booleans(), delay=st.floats(0.0, 1.5))
@example(suite=hard_case(), wait_for_steps=True, delay=0.5)
def test_no_step_process_outlives_a_killed_controller(
    signum: signal.Signals, suite: dict[str, Any], wait_for_steps: bool, delay: float
) -> None:
    token = uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "wf.json").write_text(json.dumps(suite).replace(TOKEN, token))
        trace = folder / "trace.json"
        trace.write_bytes(OLD)
        process = subprocess.Popen(
            [sys.executable, "-m", "peakopt.cli", "run", str(folder / "wf.json"), "-o", str(trace), "-q"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, MARK: token, "PYTHONWARNINGS": "ignore"},
            start_new_session=True,  # a terminal's job: the test's own group gets no signal
        )
        try:
            deadline = time.monotonic() + 60
            while wait_for_steps and not steps_started(process.pid) and process.poll() is None:
                assert time.monotonic() < deadline, "the steps did not start"
                time.sleep(0.02)
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signum)  # the controller alone, as the OOM killer does
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        survivors = settle(token)
        assert not survivors, (signum.name, survivors, err.decode(errors="replace")[-2000:])
        check_trace(trace, suite)
