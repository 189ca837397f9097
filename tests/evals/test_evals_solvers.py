"""The model-free solvers (peakopt/oracle, peakopt/trivial); the task's version, epochs, unscored samples."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evals_helpers import OPT, write_suite
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model

from peakopt.campaign.floor import floor_rows
from peakopt.evals.arguments import TaskError
from peakopt.evals.references import checked_references
from peakopt.evals.schedule import TASK_VERSION, schedule
from peakopt.evals.solvers import oracle, trivial
from peakopt.evals.suites import load_suite
from peakopt.models import Schedule
from peakopt.oracle import evaluate


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    return tmp_path / "cache"


def run(tmp_path: Path, solver: Any, **args: Any) -> EvalLog:
    (log,) = inspect_eval(
        schedule(**args),
        model="mockllm/model",
        solver=solver,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def efficiency(log: EvalLog) -> float:
    """The log's mean efficiency."""
    assert log.results is not None
    [found] = [s for s in log.results.scores if s.name == "efficiency"]
    return float(found.metrics["mean"].value)


def sample_values(log: EvalLog) -> dict[str, dict[str, float]]:
    return {str(s.id): s.scores["oracle"].value for s in log.samples or []}  # type: ignore[misc]


@pytest.mark.slow
def test_the_oracle_solver_scores_one_on_every_proven_pair_of_the_bundled_default(
    tmp_path: Path, cache: Path
) -> None:
    log = run(tmp_path, oracle())
    suite = load_suite("bundled:default")
    pairs = [(w, m) for w in suite.workflows for m in suite.machines]
    refs = checked_references(log.eval.metadata["reference"], pairs)
    values = sample_values(log)
    assert len(values) == 900
    for (workflow, machine), result in refs.items():
        value = values[f"{workflow}@{machine}"]
        assert result.status == "optimal" and value["efficiency"] == 1.0 and value["safe"] == 1.0, (
            workflow,
            machine,
        )
        # and the oracle agrees, independently of the scorer: the answered starts are the reference's
        starts = result.starts
        assert starts is not None
        score = evaluate(
            suite.workflow(workflow),
            suite.machine(str(machine)),
            Schedule(workflow=workflow, machine=str(machine), starts=starts),
        )
        assert score.safe and score.makespan == pytest.approx(value["makespan"], rel=1e-12)


@pytest.mark.parametrize("answer", ["zero", "serial", "asap"])
def test_a_trivial_solver_earns_what_the_floor_says(tmp_path: Path, cache: Path, answer: str) -> None:
    suite = write_suite(tmp_path / "suite.json", ("optimal", "serial"))
    log = run(tmp_path, trivial(answer), suite=str(suite))
    loaded = load_suite(str(suite))
    refs = checked_references(
        log.eval.metadata["reference"], [(w, m) for w in loaded.workflows for m in loaded.machines]
    )
    rows = {(r.workflow, r.machine): r for r in floor_rows(loaded, refs) if r.source == f"trivial:{answer}"}
    for sample_id, value in sample_values(log).items():
        workflow, machine = sample_id.split("@")
        row = rows[(workflow, machine)]
        assert value["efficiency"] == row.efficiency and value["safe"] == float(row.safe)
    # serial on refund is safe at 10.4 s against 8.6 s; zero and asap overflow its memory
    expected = {"zero": 0.0, "serial": OPT / 10.4, "asap": 0.0}[answer]
    assert all(v["efficiency"] == pytest.approx(expected, rel=1e-12) for v in sample_values(log).values())


def test_a_trivial_answer_it_does_not_have_is_refused() -> None:
    with pytest.raises(TaskError, match="-S answer='fast'"):
        trivial("fast")


def test_the_task_is_versioned_and_its_epochs_are_averaged(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", ("optimal",))
    (log,) = inspect_eval(
        schedule(suite=str(suite)),
        model="mockllm/model",
        solver=trivial("serial"),
        epochs=2,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.eval.task_version == TASK_VERSION
    assert log.eval.config.epochs == 2 and log.eval.config.epochs_reducer == ["mean"]
    assert len(log.samples or []) == 2  # one sample, two epochs
    assert log.results is not None
    assert efficiency(log) == pytest.approx(OPT / 10.4)


def test_a_sample_the_model_never_answered_is_unscored(tmp_path: Path, cache: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", ("optimal", "serial"))

    def failing(messages: Any, tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
        output = ModelOutput.from_content(model="mock", content="")
        output.error = "the provider refused the request"
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting
        return output

    model = get_model("mockllm/model", custom_outputs=failing)
    (log,) = inspect_eval(
        schedule(suite=str(suite)), model=model, log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    for sample in log.samples or []:
        score = sample.scores["oracle"]
        assert isinstance(score.value, float) and math.isnan(score.value)
        assert score.explanation == "no answer from the model: the provider refused the request"


def test_an_offline_run_from_the_command_line(tmp_path: Path) -> None:
    # the command a user types, in a subprocess with every proxy pointing nowhere: no network
    env = dict(os.environ, PEAKOPT_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    env |= dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), "http://127.0.0.1:9")
    inspect = Path(sys.executable).with_name("inspect")
    logs = tmp_path / "logs"
    args = ["eval", "peakopt/schedule", "--model", "mockllm/model", "-T", "suite=bundled:refund"]
    for solver in (["--solver", "peakopt/oracle"], ["--solver", "peakopt/trivial", "-S", "answer=serial"]):
        done = subprocess.run(
            [str(inspect), *args, *solver, "--log-dir", str(logs), "--display", "none"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    found = sorted(logs.glob("*.eval"))
    assert len(found) == 2
    efficiencies = sorted(efficiency(read_eval_log(str(f))) for f in found)
    assert efficiencies == pytest.approx([OPT / 10.4, 1.0])
