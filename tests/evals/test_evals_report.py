"""An eval README's Evaluation Report from Inspect logs: the command that made each log, its figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docs_scripts import docs_script
from evals_helpers import OPT, run_cli, write_suite
from hypothesis import given
from hypothesis import strategies as st
from inspect_ai._util.config import parse_cli_args
from inspect_ai.log import EvalLog, read_eval_log

from peakopt.evals.command_line import argument_text
from peakopt.evals.logs import read_log

#: Values a task or solver argument takes: what YAML holds (a top-level string is drawn apart).
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(VALUES | st.text().filter(lambda text: "," not in text))
def test_an_argument_reads_back_as_it_was_passed(value: Any) -> None:
    # Inspect's own reader of -T and -S
    assert parse_cli_args([f"key={argument_text(value)}"])["key"] == value


def test_a_string_with_a_comma_is_the_list_inspect_makes_of_it() -> None:
    # no quoting passes one through -T (Inspect splits it): the command says what Inspect reads
    assert parse_cli_args([f"key={argument_text('a,b')}"])["key"] == ["a", "b"]


def inspect(arguments: list[str], folder: Path) -> None:
    """``inspect eval ARGUMENTS`` as a user runs it from a shell, offline, in ``folder``.

    In a folder of its own: a checkout's peakopt.egg-info (``pip install -e``) in the working
    folder hides the installed package's metadata from Inspect, which then registers the tasks
    without their ``peakopt/`` namespace (so does this test process, whose folder is the checkout).
    """
    env = dict(os.environ, PEAKOPT_CACHE=str(folder / "cache"), HF_HUB_OFFLINE="1")
    command = [str(Path(sys.executable).with_name("inspect")), "eval", *arguments, "--display", "none"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=folder, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[EvalLog]]:
    """(suite, logs): the oracle's and serial's answers (two epochs) on a small suite, oracle first."""
    folder = tmp_path_factory.mktemp("report")
    suite = write_suite(folder / "suite.json", ("optimal", "serial"))
    task = ["peakopt/schedule", "--model", "mockllm/model", "-T", f"suite={suite}", "-T", "seed=3"]
    made = []
    for solver in (["--solver", "peakopt/oracle"], ["--solver", "peakopt/trivial", "-S", "answer=serial"]):
        log_dir = folder / solver[1].replace("/", "-")
        epochs = ["--epochs", "2"] if "answer=serial" in solver else []
        inspect([*task, *solver, *epochs, "--log-dir", str(log_dir)], folder)
        (path,) = log_dir.glob("*.eval")
        made.append(read_eval_log(str(path)))
    return suite, made


def test_a_logs_command_runs_the_same_evaluation_again(
    tmp_path: Path, logs: tuple[Path, list[EvalLog]]
) -> None:
    _, (_, first) = logs
    command = read_log(first.location).command
    assert command.startswith("inspect eval peakopt/schedule --model mockllm/model -T suite=")
    # the command as a user runs it again, from a shell
    again = tmp_path / "again"
    env = dict(os.environ, PEAKOPT_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        f"{command} --log-dir {again} --display none",
        shell=True,
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = again.glob("*.eval")
    second = read_eval_log(str(path))
    for spec in ("task", "model", "task_args", "solver", "solver_args"):
        assert getattr(second.eval, spec) == getattr(first.eval, spec), spec
    assert second.eval.config.epochs == first.eval.config.epochs == 2
    assert second.eval.config.epochs_reducer == first.eval.config.epochs_reducer
    assert efficiencies(second) == efficiencies(first)


def efficiencies(log: EvalLog) -> list[tuple[str, int, float]]:
    """Each sample's oracle efficiency, by sample and epoch."""
    found = []
    for sample in log.samples or []:
        assert sample.scores is not None
        value = sample.scores["oracle"].value
        assert isinstance(value, dict)
        found.append((str(sample.id), sample.epoch, float(value["efficiency"])))
    return sorted(found)


def test_the_section_lists_each_log_best_first_with_its_command(logs: tuple[Path, list[EvalLog]]) -> None:
    suite, made = logs
    code, out, err = run_cli(
        "report", *(log.location for log in reversed(made)), "--table-format", "eval-report"
    )
    assert code == 0, err
    assert out.startswith("## Evaluation Report\n")
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| mockllm")]
    # the oracle first (1.000), then serial (OPT / 10.4): best first, whatever the inputs' order
    assert [row[1] for row in rows] == ["peakopt/oracle", "peakopt/trivial answer=serial"]
    assert [row[3:5] for row in rows] == [["2", "1"], ["2", "2"]]  # samples (pairs), epochs
    assert rows[0][5].startswith("1.000") and rows[1][5].startswith(f"{OPT / 10.4:.3f}")
    assert rows[1][6:8] == ["100.0%", "100.0%"]  # safe, valid
    block = out[out.index("```bash\n") + 8 : out.index("\n```\n")].splitlines()
    assert block == [read_log(made[0].location).command, read_log(made[1].location).command]
    assert all(f"-T suite={suite}" in line and "-T seed=3" in line for line in block)
    assert "peakopt 0." in out and "from 2 logs." in out


def test_the_command_is_in_the_logs_provenance(logs: tuple[Path, list[EvalLog]]) -> None:
    _, made = logs
    code, out, err = run_cli("report", made[0].location, "--table-format", "md")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("| command"))
    assert "inspect eval peakopt/schedule --model mockllm/model" in row and "--solver peakopt/oracle" in row


def test_only_inspect_logs_make_an_evaluation_report(
    tmp_path: Path, logs: tuple[Path, list[EvalLog]]
) -> None:
    suite, made = logs
    scores = tmp_path / "scores.jsonl"
    code, _, err = run_cli("score", str(suite), "-s", made[0].location, "-o", str(scores), "-q")
    assert code == 0, err
    code, out, err = run_cli("report", made[0].location, str(scores), "--table-format", "eval-report")
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1] == (
        f"Error: {scores}: is a scores file, not an Inspect log; --table-format eval-report reads "
        "Inspect logs only (it names the command that made each)"
    )


@pytest.mark.slow
def test_the_readmes_evaluation_report_is_what_the_baselines_logs_give() -> None:
    # the eight offline evaluations run again (about 2 minutes), compared with dates and digests masked
    assert docs_script("eval_report").main(["--check"]) == 0
