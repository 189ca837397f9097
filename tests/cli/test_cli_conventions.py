"""What every command shares: --quiet, the --json shapes, the defaults, the old spellings, no float noise."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
import pytest
from cli_helpers import jsonl
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from peakopt.cli.main import COMMANDS, cli, load_command
from peakopt.instances import load
from peakopt.instances.native import dump
from peakopt.oracle.base.exact import TOLERANCE
from peakopt.plots.columns import figure, number

STARTS = {"lookup_order": 0, "fraud_score": 0, "history_scan": 4.8, "policy_search": 0, "decide": 8.0}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def option(command: str, name: str) -> click.Option:
    (found,) = [p for p in load_command(command).params if isinstance(p, click.Option) and name in p.opts]
    return found


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"workflow": "refund", "source": "llm", "starts": STARTS}) + "\n")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_quiet_and_the_same_short_options(command: str) -> None:
    assert option(command, "--quiet").opts == ["-q", "--quiet"]
    short = {"--output": "-o", "--method": "-m", "--reference": "-r", "--schedules": "-s", "--jobs": "-j"}
    for long, letter in short.items():
        found = [p for p in load_command(command).params if isinstance(p, click.Option) and long in p.opts]
        assert all(letter in p.opts for p in found), (command, long)


def test_solve_stress_and_plot_share_their_defaults() -> None:
    for name in ("--workers", "--time-limit"):
        assert len({option(c, name).default for c in ("solve", "stress", "plot")}) == 1, name
    jobs = [option(c, "--jobs") for c in ("solve", "stress")]
    assert jobs[0].default == jobs[1].default and jobs[0].help == jobs[1].help  # the cores


def test_quiet_silences_tables_and_the_closing_line_but_not_stdout(tmp_path: Path, answers: Path) -> None:
    out = tmp_path / "scores.jsonl"
    code, loud, err = run("score", "bundled:refund", "-s", str(answers), "--json", "-o", str(out))
    assert code == 0 and "peakopt score" in err and err.splitlines()[-1].startswith(f"wrote {out}: ")
    code, quiet, err = run("score", "bundled:refund", "-s", str(answers), "--json", "-o", str(out), "-q")
    assert code == 0 and err == "" and quiet == loud
    code, _, err = run("schedule", "bundled:refund", "-m", "asap", "--quiet")
    assert code == 0 and err == ""
    code, _, err = run("solve", "bundled:refund", "--json", "--quiet", "--time-limit", "5")
    assert code == 0 and err == ""


def test_quiet_still_shows_warnings_and_errors(tmp_path: Path, answers: Path) -> None:
    gpu = tmp_path / "gpu.json"
    suite = dump(load("bundled:refund"))
    suite["workflows"][0]["tasks"][0]["demand"]["gpu"] = 1
    gpu.write_text(json.dumps(suite))
    code, _, err = run("score", str(gpu), "-s", str(answers), "-q")
    assert code == 0 and err.startswith("Warning: ") and "gpu" in err and len(err.splitlines()) == 1
    code, _, err = run("score", "bundled:refund", "-s", str(tmp_path / "none.jsonl"), "-q")
    assert code == 1 and err.startswith("Error: ")


def test_record_streams_print_json_lines(tmp_path: Path, answers: Path) -> None:
    plans = tmp_path / "plans.jsonl"
    plans.write_text(json.dumps({"workflow": "refund", "source": "x", "edges": []}) + "\n")
    for args in (
        ["validate", "bundled:refund", "bundled:default"],
        ["solve", "bundled:refund", "--time-limit", "5"],
        ["schedule", "bundled:refund", "-m", "asap,serial"],
        ["score", "bundled:refund", "-s", str(answers)],
        ["plan-score", "-t", "bundled:refund", "-p", str(plans)],
    ):
        code, out, err = run(*args, "--json")
        assert code == 0, err
        assert out and all(isinstance(r, dict) for r in jsonl(out)), args


def test_summaries_print_one_json_document(tmp_path: Path, answers: Path) -> None:
    scores = tmp_path / "scores.jsonl"
    assert run("score", "bundled:refund", "-s", str(answers), "-o", str(scores))[0] == 0
    code, out, err = run("report", str(scores), "--json", "--worst", "0")
    assert code == 0, err
    summaries, provenance = out.splitlines()  # then the report's provenance, the last document
    (summary,) = json.loads(summaries)
    assert summary["group"] == {"source": "llm"} and summary["records"] == 1
    assert [given["path"] for given in json.loads(provenance)["inputs"]] == [str(scores)]


def test_output_and_json_together_write_and_print_the_same_records(tmp_path: Path) -> None:
    for command, extra in (("solve", ["--time-limit", "5"]), ("schedule", ["-m", "asap"])):
        out = tmp_path / f"{command}.jsonl"
        code, printed, err = run(command, "bundled:refund", *extra, "-o", str(out), "--json")
        assert code == 0, err
        assert jsonl(printed) == jsonl(out.read_text()) and len(jsonl(printed)) == 1


def test_by_method_is_an_alias_of_source(tmp_path: Path, answers: Path) -> None:
    shapes = []
    for by in ("source", "method", "method,source"):
        code, _, err = run("score", "bundled:refund", "-s", str(answers), "--by", by)
        assert code == 0, err
        shapes.append(err)
    assert shapes[0] == shapes[1] == shapes[2]
    code, _, err = run("score", "bundled:refund", "-s", str(answers), "--by", "colour")
    assert code == 2 and "unknown field colour" in err and "method for source" in err


def test_plots_old_schedule_spelling_works_hidden_and_warned(tmp_path: Path, answers: Path) -> None:
    png = tmp_path / "x.png"
    code, _, err = run("plot", "bundled:refund", "--schedule", str(answers), "-o", str(png))
    assert code == 0, err
    assert "Warning: --schedule is now --schedules; the old spelling goes in the next release" in err
    assert png.stat().st_size > 0
    code, help_text, _ = run("plot", "--help")
    assert "--schedules" in help_text and "--schedule " not in help_text


@given(st.floats(min_value=-TOLERANCE, max_value=TOLERANCE))
def test_float_noise_is_zero_in_a_table(noise: float) -> None:
    assert figure(noise) == "0" and number(noise) == "0.000"


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9))
def test_a_table_number_is_never_minus_zero_and_keeps_its_value(value: float) -> None:
    shown = figure(value)
    assert float(shown) != 0 or not shown.startswith("-")
    if abs(value) > TOLERANCE:
        assert math.isclose(float(shown), value, rel_tol=1e-5)
    assert figure(12.000000000000002) == "12" and figure(None) == "-"


def test_stress_ends_with_what_it_wrote_in_its_store(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    args = ["stress", "bundled:refund", "-m", "asap,serial", "--db", str(db), "--time-limit", "5", "-j", "1"]
    code, _, err = run(*args)
    assert code == 0, err
    assert err.splitlines()[-1] == f"wrote {db}: 2 rows (2 run now)"
    code, _, err = run(*args)
    assert code == 0 and err.splitlines()[-1] == f"wrote {db}: 2 rows (0 run now)"
    code, _, err = run(*args, "-q")
    assert code == 0 and err == ""  # resuming is a note, which --quiet silences
