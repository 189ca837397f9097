"""``peakopt score TRACE`` on a machine with a soft resource: ``--soft-as-hard`` judges a trace too."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run


def test_a_run_that_oversubscribed_only_cpu_is_safe_unless_soft_counts_as_hard(tmp_path: Path) -> None:
    machine = {"name": "box", "capacity": {"cpu": 1, "memory_mb": 300}, "soft": ["cpu"]}
    tasks = [
        {"id": n, "duration": 0.2, "demand": {"cpu": 1, "memory_mb": 10}, "meta": {"command": "sleep 0.2"}}
        for n in "ab"
    ]
    path = tmp_path / "wf.json"
    path.write_text(json.dumps({"machines": [machine], "workflows": [{"id": "w", "tasks": tasks}]}))
    trace = tmp_path / "trace.json"
    code, _, err = run("run", str(path), "--policy", "asap", "--no-guard", "-o", str(trace))
    assert code == 0, err
    steps = json.loads(trace.read_text())["steps"]
    assert max(s["start"] for s in steps) < min(s["end"] for s in steps), "the two steps ran together"
    verdicts = {}
    for options in ((), ("--soft-as-hard",)):
        code, out, err = run("score", str(trace), "--json", *options)
        assert code == 0, err
        (row,) = [json.loads(line) for line in out.splitlines()]
        verdicts[options] = row["safe"]
        if row["safe"]:
            # the run's durations already hold whatever slowdown it had: not slowed a second time
            # (processor sharing would say 0.4 s for two 1-core steps on one core)
            assert row["slowed_makespan"] == row["makespan"] < 0.35, row
            # and it is charged never less than the optimum for its durations: one at a time
            assert row["gap"] == 0 and row["efficiency"] == 1, row
    assert verdicts == {(): True, ("--soft-as-hard",): False}
