"""The tasks' arguments are checked before any work: one message naming the argument, the CLI's ranges.

Inspect reads ``-T name=value`` as YAML, so the values arrive as YAML makes
them: ``0`` an int, ``1e300`` and ``abc`` strings, ``[worker,worker]`` a list.
Each row is one such value given to a task, and the start of the one message
it must give; no reference is solved for any of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evals_helpers import write_suite

from peakopt.evals.arguments import TaskError
from peakopt.evals.plan import plan
from peakopt.evals.references import cache_dir
from peakopt.evals.schedule import schedule

#: (task, arguments, what the message must start with, and a piece of the rest)
BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("schedule", {"time_limit": 0}, "-T time_limit=0: ", "not in the range 0<x<=1000000"),
    ("schedule", {"time_limit": "1e300"}, "-T time_limit='1e300': ", "not in the range"),
    ("schedule", {"time_limit": 1e300}, "-T time_limit=1e+300: ", "not in the range"),
    ("schedule", {"time_limit": -5}, "-T time_limit=-5: ", "not in the range"),
    ("schedule", {"time_limit": "abc"}, "-T time_limit='abc': ", "not a valid float"),
    ("schedule", {"time_limit": ".nan"}, "-T time_limit='.nan': ", "not a valid float"),
    ("schedule", {"time_limit": float("nan")}, "-T time_limit=nan: ", "not a finite number"),
    ("schedule", {"time_limit": [1, 2]}, "-T time_limit=[1, 2]: ", "one value is needed, not a list"),
    ("schedule", {"limit": "abc"}, "-T limit='abc': ", "not a valid integer"),
    ("schedule", {"limit": -1}, "-T limit=-1: ", "not in the range 0<=x<=1000000"),
    ("schedule", {"limit": 10**7}, "-T limit=10000000: ", "not in the range"),
    ("schedule", {"seed": "abc"}, "-T seed='abc': ", "not a valid integer"),
    ("schedule", {"seed": -1}, "-T seed=-1: ", "not in the range 0<=x<=2147483647"),
    ("schedule", {"seed": 2**31}, "-T seed=2147483648: ", "not in the range"),
    (
        "schedule",
        {"setting": "rascal"},
        "-T setting='rascal': ",
        "'rascal' is not one of 'rasc', 'durations'",
    ),
    ("schedule", {"structured": "abc"}, "-T structured='abc': ", "not a valid boolean"),
    ("schedule", {"machines": ["worker", "worker"]}, "-T machines: ", "names 'worker' twice"),
    ("schedule", {"machines": "worker,worker"}, "-T machines: ", "names 'worker' twice"),
    ("schedule", {"machines": "huge"}, "-T machines: ", "no machine huge; known: worker"),
    ("schedule", {"machines": ["worker", "huge"]}, "-T machines: ", "no machine huge"),
    ("schedule", {"machines": {"a": 1}}, "-T machines: ", "not a name or a list of names"),
    ("schedule", {"tiers": ["o", "o"]}, "-T tiers: ", "names 'o' twice"),
    ("schedule", {"tiers": "zzz"}, "-T tiers: ", "no workflow of tier zzz"),
    ("schedule", {"suite": "missing.json"}, "-T suite='missing.json': ", "no such file"),
    ("schedule", {"suite": "DIR"}, "-T suite='DIR': ", "is a directory"),
    ("schedule", {"reference": "missing.jsonl"}, "-T reference='missing.jsonl': ", "no such file"),
    ("schedule", {"split": "test"}, "-T split='test': ", "'test' is not one of 'all', 'hard'"),
    ("schedule", {"splits": "hard"}, "-T splits: ", "peakopt/schedule has no argument 'splits'"),
    ("schedule", {"epochs": 3}, "-T epochs: ", "has no argument 'epochs' (its arguments: suite, setting"),
    ("plan", {"limit": "abc"}, "-T limit='abc': ", "not a valid integer"),
    ("plan", {"limit": -1}, "-T limit=-1: ", "not in the range"),
    ("plan", {"seed": 2**31}, "-T seed=2147483648: ", "not in the range"),
    ("plan", {"structured": "maybe"}, "-T structured='maybe': ", "not a valid boolean"),
    ("plan", {"tiers": "o,o"}, "-T tiers: ", "names 'o' twice"),
    ("plan", {"tiers": "zzz"}, "-T tiers: ", "no workflow of tier zzz"),
    ("plan", {"suite": "missing.json"}, "-T suite='missing.json': ", "no such file"),
    ("plan", {"machines": "worker"}, "-T machines: ", "peakopt/plan has no argument 'machines'"),
    ("plan", {"time_limit": 10}, "-T time_limit: ", "peakopt/plan has no argument 'time_limit'"),
]

TASKS = {"schedule": schedule, "plan": plan}


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DIR").mkdir()
    return write_suite(tmp_path / "suite.json", ("optimal", "serial"))


@pytest.mark.parametrize(("task", "args", "start", "piece"), BAD, ids=[f"{t}-{a}" for t, a, _, _ in BAD])
def test_a_bad_argument_is_one_message_naming_it(
    suite: Path, task: str, args: dict[str, Any], start: str, piece: str
) -> None:
    given = {"suite": str(suite)} | args
    with pytest.raises(TaskError) as raised:
        TASKS[task](**given)
    message = str(raised.value)
    assert message.startswith(start) and piece in message, message
    assert "\n" not in message
    assert not cache_dir().exists()  # refused before any reference was solved


def test_the_table_covers_every_argument() -> None:
    named = {name for _, args, _, _ in BAD for name in args}
    assert named >= {"time_limit", "limit", "seed", "setting", "structured", "machines", "tiers", "suite"}
    assert named >= {"reference", "split"} and len(BAD) >= 35


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"time_limit": "10"}, 10.0),
        ({"time_limit": "2.5"}, 2.5),
        ({"limit": "1"}, 1),
        ({"seed": "7"}, 7),
        ({"structured": "false"}, False),
        ({"machines": ["worker"]}, None),
    ],
)
def test_good_values_as_yaml_gives_them_are_taken(
    suite: Path, tmp_path: Path, args: dict[str, Any], expected: object
) -> None:
    reference = tmp_path / "refs.jsonl"
    record = {"workflow": "optimal", "machine": "worker", "status": "error", "message": "not solved"}
    reference.write_text(json.dumps(record) + "\n")
    built = schedule(suite=str(suite), reference=str(reference), **args)
    assert len(built.dataset) >= 1
    if expected is not None:
        assert built.metadata["arguments"][next(iter(args))] == expected


def test_a_damaged_cache_names_what_the_tasks_user_can_do(suite: Path) -> None:
    folder = cache_dir()
    folder.mkdir(parents=True)
    from peakopt.evals.suites import load_suite
    from peakopt.models import content_hash

    damaged = folder / f"{content_hash(load_suite(str(suite)))}.jsonl"
    damaged.write_text(json.dumps({"not": "a reference"}) + "\n")
    with pytest.raises(TaskError) as raised:
        schedule(suite=str(suite))
    message = str(raised.value)
    assert message.startswith(f"the references cache {damaged}: is not a reference file"), message
    assert "-o" not in message.split(": ", 1)[1] and "--fresh" not in message
    assert "delete it to solve the references again, or give -T reference=REFS.jsonl" in message
    assert damaged.read_text() == json.dumps({"not": "a reference"}) + "\n"  # nothing was changed


def test_inspect_prints_the_one_message_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "peakopt/schedule", "--model", "mockllm/model"),
            *("-T", "suite=bundled:refund", "-T", "limit=abc", "--log-dir", str(tmp_path / "logs")),
        ],
        capture_output=True,
        text=True,
        env=os.environ | {"PEAKOPT_CACHE": str(tmp_path / "cache")},
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    shown = (done.stdout + done.stderr).strip()
    assert done.returncode != 0
    assert (
        "Traceback" not in shown
        and shown.splitlines()[-1] == "-T limit='abc': 'abc' is not a valid integer range."
    ), shown
    assert not (tmp_path / "cache").exists()


def test_references_that_failed_are_said_before_any_sample_runs(
    suite: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reference = tmp_path / "refs.jsonl"
    failed = {"workflow": "optimal", "machine": "worker", "status": "error", "message": "worker lost"}
    reference.write_text(json.dumps(failed) + "\n")
    with caplog.at_level("WARNING", logger="peakopt.evals.schedule"):
        schedule(suite=str(suite), reference=str(reference))
    said = [r.getMessage() for r in caplog.records if "references failed" in r.getMessage()]
    assert said == [
        f"{reference}: 1 of 2 references failed (e.g. optimal@worker: worker lost): "
        "no gap or efficiency for those samples"
    ]
