"""A hard memory limit per subprocess step (peakopt.runtime.limits): real processes that lie are killed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from runtime_helpers import child

from peakopt.models import Machine, Task, Workflow
from peakopt.runtime.controller import Controller
from peakopt.runtime.limits import EXCEEDED, LIMIT_ENV, LimitError, limiter
from peakopt.runtime.policies import named_policy
from peakopt.runtime.steps import Step

BOX = Machine(name="box", capacity={"cpu": 2, "memory_mb": 1024})
#: "liar" declares 64 MiB and allocates 300; "honest" declares 200 and allocates 20; "after" needs the liar.
FLOW = Workflow(
    id="w",
    tasks=(
        Task(id="liar", duration=0.5, demand={"memory_mb": 64, "cpu": 1}),
        Task(id="honest", duration=0.5, demand={"memory_mb": 200, "cpu": 1}),
        Task(id="after", duration=0.1, demand={"memory_mb": 10}, depends_on=("liar",)),
    ),
)
STEPS: dict[str, Step] = {
    "liar": child((300, 0.5, 0)),
    "honest": child((20, 0.3, 0)),
    "after": ["true"],
}


def limited(mode: Any = "auto") -> Any:
    controller = Controller(FLOW, BOX, named_policy("admission", FLOW, BOX), STEPS, limit_memory=mode)
    return asyncio.run(controller.run())


def leftovers(parent: Path | None) -> list[Path]:
    return [] if parent is None else sorted(parent.glob("peakopt-limit-*"))


def test_a_step_over_its_declared_memory_is_killed_in_its_cgroup_and_the_cgroup_removed() -> None:
    try:
        where = limiter("cgroup")
    except LimitError as exc:
        pytest.skip(f"no cgroup here: {exc}")
    trace = limited("cgroup")
    liar, honest, after = trace.steps
    assert liar.status == "failed" and liar.error is not None, liar
    assert liar.error.startswith(f"{EXCEEDED} (memory_mb 64 MiB): killed at its cgroup")
    assert liar.exit_code == -9
    assert honest.status == "ok" and after.status == "skipped"
    assert trace.status == "failed"
    assert leftovers(where.parent) == []


def test_without_cgroups_rlimit_as_fails_the_lying_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LIMIT_ENV, "rlimit")
    assert limiter("auto").how == "RLIMIT_AS" and limiter("cgroup").how == "RLIMIT_AS"
    trace = limited("auto")
    liar, honest, after = trace.steps
    assert liar.status == "failed" and liar.error is not None
    assert liar.error.startswith(f"{EXCEEDED} (memory_mb 64 MiB): an allocation failed at its RLIMIT_AS")
    assert liar.exit_code == 1  # Python's MemoryError
    assert honest.status == "ok" and after.status == "skipped"


def test_an_honest_run_is_not_touched_by_its_limits() -> None:
    honest = Workflow(id="w", tasks=(FLOW.tasks[1],))
    controller = Controller(
        honest, BOX, named_policy("admission", honest, BOX), {"honest": STEPS["honest"]}, limit_memory="auto"
    )
    trace = asyncio.run(controller.run())
    assert trace.status == "ok" and trace.steps[0].error is None


def test_without_limits_the_liar_runs_to_its_end() -> None:
    trace = limited(None)
    assert [s.status for s in trace.steps] == ["ok", "ok", "ok"]


def test_cgroup_asked_for_where_none_can_be_used_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import peakopt.runtime.limits as limits
    from peakopt.runtime.cgroups import Detected

    monkeypatch.setattr(limits, "detect_v2", lambda: Detected(None, "no v2"))
    monkeypatch.setattr(limits, "detect", lambda: Detected(None, "no v2; no v1 memory hierarchy"))
    with pytest.raises(LimitError, match="no cgroup can limit the steps' memory here: no v2; no v1"):
        limiter("cgroup")
    assert limiter("auto").how == "RLIMIT_AS"


def test_peakopt_run_limit_memory_fails_the_liar_in_words(tmp_path: Path) -> None:
    tasks = [
        {
            "id": t.id,
            "duration": t.length,
            "demand": dict(t.demand or {}),
            "depends_on": list(t.depends_on),
            "meta": {"command": STEPS[t.id]},
        }
        for t in FLOW.tasks
    ]
    path = tmp_path / "wf.json"
    path.write_text(json.dumps({"machines": [BOX.model_dump()], "workflows": [{"id": "w", "tasks": tasks}]}))
    code, _, err = run("run", str(path), "--machine", "box", "--limit-memory")
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"Error: step 'liar' failed ({EXCEEDED} (memory_mb 64 MiB):"), err
    assert last.endswith("; 1 step skipped")
