"""Which log a command is given: refused in one line when it is the wrong kind; errored and partial runs said.

Real Inspect logs, made offline with mockllm: a scheduling log, a planning
log, a log of another task, one where a sample errored and one cut short
(cancelled, some samples missing).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evals_helpers import ANSWERS, TRUE, canned, run_cli, workflow_of, write_suite
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match

from peakopt.evals.plan import plan
from peakopt.evals.references import cache_dir
from peakopt.evals.schedule import schedule


def _run(task: Task, outputs: Callable[..., ModelOutput], folder: Path, **options: Any) -> Path:
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(folder), display="none", **options)
    return Path(log.location)


def _erring(messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
    if workflow_of(messages[-1].text) == "garbage":
        raise RuntimeError("the provider is down")
    return canned(messages, tools, choice, config)


def _cut_short(log: Path, target: Path, drop: str, status: str = "cancelled") -> Path:
    """A copy of ``log`` as a run cut short leaves it: ``status``, the sample ``drop`` missing."""
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(target, "w") as out:
        for item in source.infolist():
            if item.filename.startswith("samples/") and drop in item.filename:
                continue
            data = source.read(item)
            if item.filename == "header.json":
                header = json.loads(data)
                header["status"] = status
                data = json.dumps(header).encode()
            out.writestr(item, data)
    return target


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kinds")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PEAKOPT_CACHE", str(folder / "cache"))
        suite = write_suite(folder / "suite.json")
        found = {"suite": suite}
        found["schedule"] = _run(schedule(suite=str(suite)), canned, folder / "schedule")
        found["plan"] = _run(plan(suite=str(suite)), plan_canned_all, folder / "plan")
        other = Task(dataset=MemoryDataset([Sample(input="2 + 2?", target="4", id="sum")]), scorer=match())
        found["other"] = _run(other, other_canned, folder / "other")
        found["errored"] = _run(schedule(suite=str(suite)), _erring, folder / "errored", fail_on_error=False)
        for status in ("cancelled", "started", "error"):
            found[status] = _cut_short(found["schedule"], folder / f"{status}.eval", "mute@worker", status)
        (found["reference"],) = cache_dir().glob("*.jsonl")
    return found


def plan_canned_all(
    messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig
) -> ModelOutput:
    """The true dependencies of the refund workflow, whichever copy is asked about."""
    return _said(json.dumps({"dependencies": TRUE}))


def _said(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mock", content=text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting (offline)
    return output


def other_canned(messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
    return _said("4")


def _one_error(code: int, err: str) -> str:
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    return lines[0]


def test_a_scheduling_log_given_to_plan_score_is_refused(logs: dict[str, Path]) -> None:
    code, _, err = run_cli("plan-score", "-t", str(logs["suite"]), "-p", str(logs["schedule"]))
    line = _one_error(code, err)
    assert line == (
        f"Error: {logs['schedule']}: is a scheduling log (peakopt/schedule), not a planning one; "
        "score it with peakopt score SUITE --schedules LOG"
    )


@pytest.mark.parametrize("command", ["score", "plot", "report"])
def test_a_planning_log_given_to_a_scheduling_command_is_refused(logs: dict[str, Path], command: str) -> None:
    args = {
        "score": ("score", str(logs["suite"]), "-s", str(logs["plan"])),
        "plot": (
            *("plot", str(logs["suite"]), "--workflow", "serial", "--schedules", str(logs["plan"])),
            *("-o", str(logs["suite"].with_name("plot.png"))),
        ),
        "report": ("report", str(logs["plan"])),
    }[command]
    line = _one_error(*run_cli(*args)[::2])
    assert line.startswith(f"Error: {logs['plan']}: is a planning log (peakopt/plan), not a scheduling one")


@pytest.mark.parametrize("command", ["score", "plan-score", "report"])
def test_a_log_of_another_task_is_refused(logs: dict[str, Path], command: str) -> None:
    args = {
        "score": ("score", str(logs["suite"]), "-s", str(logs["other"])),
        "plan-score": ("plan-score", "-t", str(logs["suite"]), "-p", str(logs["other"])),
        "report": ("report", str(logs["other"])),
    }[command]
    line = _one_error(*run_cli(*args)[::2])
    assert line.startswith(f"Error: {logs['other']}: is a log of the Inspect task ")
    assert "not of peakopt/schedule or peakopt/plan" in line


def test_an_errored_sample_is_counted_alike_by_score_and_report(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    scores = tmp_path / "scores.jsonl"
    args = ("score", str(logs["suite"]), "-s", str(logs["errored"]), "--reference", str(logs["reference"]))
    code, _, err = run_cli(*args, "-o", str(scores))
    assert code == 0, err
    said = (
        "1 of 6 samples of the log errored (RuntimeError('the provider is down')): "
        "counted invalid, efficiency 0"
    )
    assert (
        said in err and len([line for line in err.splitlines() if "samples of the log errored" in line]) == 1
    )
    rows = {json.loads(line)["workflow"]: json.loads(line) for line in scores.read_text().splitlines()}
    assert not rows["garbage"]["valid"] and rows["garbage"]["efficiency"] == 0.0
    code, out, err = run_cli("report", str(logs["errored"]), "--json")
    assert code == 0 and said in err, err
    from_log = json.loads(out.splitlines()[0])
    from_scores = json.loads(run_cli("report", str(scores), "--json")[1].splitlines()[0])
    assert from_log == from_scores
    (summary,) = from_log
    assert summary["records"] == len(ANSWERS) and summary["invalid"] == 2  # garbage (errored) and mute


@pytest.mark.parametrize(
    ("status", "ended"),
    [("cancelled", "was cancelled"), ("started", "is still running"), ("error", "failed")],
)
def test_a_log_cut_short_says_how_many_samples_it_holds(
    logs: dict[str, Path], status: str, ended: str
) -> None:
    said = f"the log holds 5 of its 6 samples (the evaluation {ended}): the figures are of those"
    log = logs[status]
    code, _, err = run_cli("score", str(logs["suite"]), "-s", str(log))
    assert code == 0 and f"Warning: {log}: {said}" in err, err
    code, out, err = run_cli("report", str(log), "--json")
    assert code == 0 and f"Warning: {log}: {said}" in err, err
    assert json.loads(out.splitlines()[0])[0]["records"] == 5


def test_a_complete_log_says_nothing_of_the_kind(logs: dict[str, Path]) -> None:
    code, _, err = run_cli("report", str(logs["schedule"]))
    assert code == 0 and "Warning" not in err and "errored" not in err, err


@pytest.mark.parametrize("command", ["score", "report", "plan-score"])
def test_a_directory_named_like_a_log_is_said_to_be_one(
    logs: dict[str, Path], tmp_path: Path, command: str
) -> None:
    folder = tmp_path / "run.eval"
    folder.mkdir()
    args = {
        "score": ("score", str(logs["suite"]), "-s", str(folder)),
        "report": ("report", str(folder)),
        "plan-score": ("plan-score", "-t", str(logs["suite"]), "-p", str(folder)),
    }[command]
    line = _one_error(*run_cli(*args)[::2])
    rule = "is a directory, not an Inspect log file (the logs of a run are the .eval files in it)"
    assert line == f"Error: {folder}: {rule}"
