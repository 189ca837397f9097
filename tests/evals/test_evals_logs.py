"""Inspect logs as inputs of peakopt score, report and plot; clear errors when they cannot be read."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evals_helpers import ANSWERS, canned, run_cli, write_suite
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from peakopt.campaign.provenance import oracle_identity, peakopt_version
from peakopt.evals.logs import log_records
from peakopt.evals.references import cache_dir
from peakopt.evals.schedule import schedule
from peakopt.instances import load
from peakopt.models import content_hash


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(suite, log, references) of one mockllm run of peakopt/schedule."""
    folder = tmp_path_factory.mktemp("logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PEAKOPT_CACHE", str(folder / "cache"))
        suite = write_suite(folder / "suite.json")
        (log,) = inspect_eval(
            schedule(suite=str(suite)),
            model=get_model("mockllm/model", custom_outputs=canned),
            log_dir=str(folder / "logs"),
            display="none",
        )
        (reference,) = cache_dir().glob("*.jsonl")
    return suite, Path(log.location), reference


def test_a_log_reads_as_answer_records(ran: tuple[Path, Path, Path]) -> None:
    _, log, _ = ran
    records = log_records(log)
    assert [r.line for r in records] == list(range(1, len(ANSWERS) + 1))
    by_workflow = {r.data["workflow"]: r.data for r in records if r.data}
    assert by_workflow["serial"] == {
        "id": "serial@worker",
        "workflow": "serial",
        "machine": "worker",
        "setting": "rasc",
        "source": "mockllm/model",
        "response": ANSWERS["serial"][1],
    }
    assert by_workflow["mute"]["response"] == "Done."  # the reasoning is not part of the answer


def test_report_reads_the_scores_kept_in_the_log(ran: tuple[Path, Path, Path]) -> None:
    _, log, _ = ran
    code, out, err = run_cli("report", str(log), "--json")
    assert code == 0, err
    (summary,) = json.loads(out.splitlines()[0])
    assert summary["group"] == {"source": "mockllm/model"}
    assert summary["records"] == len(ANSWERS)
    assert summary["invalid"] == 2  # garbage and mute


def test_score_and_report_agree_on_the_log(ran: tuple[Path, Path, Path], tmp_path: Path) -> None:
    suite, log, reference = ran
    scores = tmp_path / "scores.jsonl"
    code, _, err = run_cli(
        "score", str(suite), "-s", str(log), "--reference", str(reference), "-o", str(scores)
    )
    assert code == 0, err
    from_scores = json.loads(run_cli("report", str(scores), "--json")[1].splitlines()[0])
    from_log = json.loads(run_cli("report", str(log), "--json")[1].splitlines()[0])
    assert from_scores == from_log


def test_plot_draws_an_answer_of_the_log(ran: tuple[Path, Path, Path], tmp_path: Path) -> None:
    suite, log, _ = ran
    picture = tmp_path / "serial.png"
    args = ("plot", str(suite), "--workflow", "serial", "--schedule", str(log), "-o", str(picture))
    code, _, err = run_cli(*args)
    assert code == 0, err
    assert picture.stat().st_size > 0 and "mockllm/model" in err


def test_a_damaged_log_is_one_error_line(ran: tuple[Path, Path, Path], tmp_path: Path) -> None:
    suite, _, _ = ran
    bad = tmp_path / "bad.eval"
    bad.write_text("not a zip file")
    code, _, err = run_cli("score", str(suite), "-s", str(bad))
    assert code == 1
    assert err.startswith(f"Error: {bad}: is not a readable Inspect log") and len(err.splitlines()) == 1
    code, _, err = run_cli("report", str(tmp_path / "missing.eval"))
    assert (code, err.strip()) == (1, f"Error: {tmp_path / 'missing.eval'}: does not exist")


def test_a_log_without_peakopt_scores_is_refused_by_report(
    ran: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, log, _ = ran
    stripped = tmp_path / "unscored.eval"
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(stripped, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.startswith("samples/"):
                sample = json.loads(data)
                sample["scores"] = {}
                data = json.dumps(sample).encode()
            if item.filename.startswith(("reductions", "summaries")):
                continue
            target.writestr(item, data)
    code, _, err = run_cli("report", str(stripped))
    assert code == 1
    assert "holds no peakopt/schedule scores; score its answers with peakopt score" in err


def test_without_inspect_ai_a_log_says_how_to_install_it(
    ran: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, log, _ = ran
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if inspect-ai were not installed
    code, _, err = run_cli("score", str(suite), "-s", str(log))
    assert code == 1
    assert (
        err.strip()
        == f"Error: {log}: is an Inspect log; reading it needs the eval extra: pip install 'peakopt[eval]'"
    )


def test_the_command_line_starts_without_inspect_ai() -> None:
    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from peakopt.cli.main import cli\n"
        "for args in (['--help'], ['validate', 'bundled:refund'], ['score', '-h'], ['report', '-h']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0, args\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'inspect_ai'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _failing() -> Iterator[ModelOutput]:
    raise RuntimeError("the provider is down")
    yield  # a generator: mockllm asks it for each answer


def test_a_failed_evaluation_says_why_it_holds_no_scores(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", ("serial",))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
        (log,) = inspect_eval(
            schedule(suite=str(suite)),
            model=get_model("mockllm/model", custom_outputs=_failing()),
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.status == "error"
    code, _, err = run_cli("report", str(log.location))
    assert code == 1
    assert err.startswith("Error: ") and "the evaluation failed" in err and "the provider is down" in err
    assert len(err.splitlines()) == 1


def _failing_long() -> Iterator[ModelOutput]:
    raise RuntimeError("the provider is down (" + "upstream timed out after retrying; " * 8 + "giving up)")
    yield


def test_a_failed_log_beside_good_ones_is_skipped_with_one_complete_warning(
    ran: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    suite = write_suite(tmp_path / "suite.json", ("serial",))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
        (failed,) = inspect_eval(
            schedule(suite=str(suite)),
            model=get_model("mockllm/model", custom_outputs=_failing_long()),
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    _, good, _ = ran
    code, out, err = run_cli("report", str(good), str(failed.location), "--json")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("Warning:")]
    assert warnings == [
        f"Warning: skipped {failed.location}: holds no scores: the evaluation failed "
        "(RuntimeError('the provider is down (" + "upstream timed out after retrying; " * 8 + "giving up)'))"
    ], err
    assert json.loads(out.splitlines()[0])  # the good log's summary, in full
    page = tmp_path / "report.html"
    code, _, err = run_cli("report", str(good), str(failed.location), "-o", str(page), "--worst", "1")
    assert code == 0 and sum(line.startswith("Warning:") for line in err.splitlines()) == 1, err
    inputs = page.read_text().split('<table id="provenance">')[1]  # the full report, of the good log
    assert str(good) in inputs and str(failed.location) not in inputs and 'id="summary"' in page.read_text()
    code, _, err = run_cli("report", str(good), str(failed.location), "--strict")
    assert code == 1 and err.startswith("Error: ") and "the evaluation failed" in err


def test_report_draws_a_logs_worst_cases_on_the_suite_its_task_names(
    ran: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, log, _ = ran
    out = tmp_path / "report.html"
    code, _, err = run_cli("report", str(log), "-o", str(out), "--worst", "2")
    assert code == 0, err
    assert "its task's suite" in err and "used for the floor and the worst cases" in err
    drawn = next(line for line in err.splitlines() if line.startswith("wrote"))
    assert "0 worst cases" not in drawn and "worst case" in drawn
    assert "optimal" in out.read_text()  # the optimum drawn beside them, from the task's references


def test_a_log_s_report_carries_its_task_s_provenance_and_floor(ran: tuple[Path, Path, Path]) -> None:
    suite, log, _ = ran
    code, out, err = run_cli("report", str(log), "--table-format", "md")
    assert code == 0, err
    inputs = out[out.index("**inputs**") :]
    lines = [line.split(" | ") for line in inputs.splitlines() if line.startswith("| ")]
    fields = {
        cells[0].strip("| ").replace("\\_", "_"): cells[1].strip("| ").replace("\\_", "_") for cells in lines
    }
    assert fields["kind"] == "Inspect log" and fields["task"].endswith("schedule (version 1)")
    assert fields["suite"] == f"{suite} ({content_hash(load(str(suite)))})"  # as the task recorded it
    assert fields["peakopt"] == peakopt_version() and fields["oracle"] == oracle_identity()
    assert fields["sources"] == "mockllm/model" and fields["epochs"] == "1" and fields["split"] == "all"
    assert json.loads(fields["arguments"])["suite"] == str(suite)
    assert "**floor: trivial answers**" in out  # drawn from the suite and references the task names
