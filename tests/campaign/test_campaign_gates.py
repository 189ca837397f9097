"""--fail-on thresholds and the all-failed rule: CI gates on a campaign's summary."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from stress_helpers import small_suite

from peakopt.campaign.gates import Threshold, all_failed, crossings, error_reasons, summary_fields
from peakopt.campaign.stress import ERROR
from peakopt.campaign.summaries import MethodSummary
from peakopt.cli.main import cli
from peakopt.oracle import ScoreRow

FIELDS = summary_fields(MethodSummary)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def summary(gap_mean: float | None, safe_rate: float = 1.0, errors: int = 0) -> MethodSummary:
    gap = None if gap_mean is None else {"count": 1, "mean": gap_mean, "median": 0, "p95": 0, "max": 0}
    return MethodSummary(
        group={"method": "m"},
        records=1,
        invalid=0,
        invalid_reasons={},
        safe_rate=safe_rate,
        mean_makespan=None,
        mean_cva=None,
        mean_avoidable_cva=None,
        strict_mru=0.0,
        safe_mru=0.0,
        gap=gap,
        gap_vs_lb=None,
        gap_vs_ub=None,
        pushed=0,
        filled=0,
        errors=errors,
    )


def test_the_fields_are_the_summary_numbers() -> None:
    assert FIELDS["gap_mean"] == ("gap", "mean") and FIELDS["gap_vs_lb_max"] == ("gap_vs_lb", "max")
    assert {"safe_rate", "errors", "invalid", "records", "gap_p95", "strict_mru"} <= set(FIELDS)
    assert "group" not in FIELDS and "invalid_reasons" not in FIELDS


@pytest.mark.parametrize(
    ("text", "field", "op", "value"),
    [
        ("gap_mean>5%", "gap_mean", ">", 0.05),
        (" safe_rate < 99.5 % ", "safe_rate", "<", 0.995),
        ("errors>=1", "errors", ">=", 1.0),
        ("gap_p95<=0.2", "gap_p95", "<=", 0.2),
        ("invalid>1e2", "invalid", ">", 100.0),
    ],
)
def test_thresholds_parse(text: str, field: str, op: str, value: float) -> None:
    found = Threshold.parse(text, FIELDS)
    assert (found.field, found.op, found.value) == (field, op, value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gap_mean", "expected FIELD OP NUMBER"),
        ("gap_mean=5%", "expected FIELD OP NUMBER"),
        ("gap_mean>>5", "is not a number"),
        ("gap_men>5%", "unknown field 'gap_men'"),
        ("gap_mean>nan", "must be finite"),
        ("gap_mean>inf", "must be finite"),
        ("gap_mean>1e999", "must be finite"),
        ("gap_mean>5%%", "expected FIELD OP NUMBER"),
        ("", "expected FIELD OP NUMBER"),
    ],
)
def test_bad_thresholds_say_why(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Threshold.parse(text, FIELDS)


@given(st.text(max_size=30))
def test_any_text_is_a_threshold_or_a_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):  # and nothing else
        Threshold.parse(text, FIELDS)


@given(
    st.sampled_from(sorted(FIELDS)),
    st.sampled_from([">", ">=", "<", "<="]),
    st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False),
    st.booleans(),
)
def test_a_written_threshold_reads_back(field: str, op: str, number: object, percent: bool) -> None:
    found = Threshold.parse(f"{field}{op}{number}{'%' if percent else ''}", FIELDS)
    assert (found.field, found.op) == (field, op)
    assert found.value == pytest.approx(float(str(number)) / (100 if percent else 1))


def test_crossing_is_strict_or_not_as_written_and_a_missing_figure_fails() -> None:
    at_five = summary(0.05)
    assert Threshold.parse("gap_mean>5%", FIELDS).crossed(at_five) is None
    assert Threshold.parse("gap_mean>=5%", FIELDS).crossed(at_five) == "gap_mean 5%"
    assert Threshold.parse("gap_mean>5%", FIELDS).crossed(summary(None)) == "no gap_mean"
    assert Threshold.parse("safe_rate<100%", FIELDS).crossed(summary(0.0, safe_rate=0.5)) == "safe_rate 50%"
    both = [Threshold.parse(t, FIELDS) for t in ("gap_mean>1%", "errors>0")]
    found = crossings(both, [summary(0.2, errors=2)], lambda s: "method m")
    assert found == "gap_mean>1%: method m has gap_mean 20%; errors>0: method m has errors 2"
    assert crossings(both, [summary(0.0)], lambda s: "m") == ""


def row(source: str, reason: str | None) -> ScoreRow:
    if reason is None:
        return ScoreRow(workflow="w", machine="m", source=source, valid=True)
    return ScoreRow(
        workflow="w", machine="m", source=source, valid=False, reasons=[reason], reason_kinds=[ERROR]
    )


def test_error_reasons_are_grouped_and_counted() -> None:
    rows = [row("a", "boom"), row("a", "boom"), row("b", "hang"), row("a", None), row("a", "hang")]
    assert error_reasons(rows) == [("a", "boom", 2), ("b", "hang", 1), ("a", "hang", 1)]
    assert all_failed(rows) is None
    failed = all_failed([r for r in rows if not r.valid])
    assert failed == "every row failed (4 rows): a: 2 × boom; b: 1 × hang; a: 1 × hang"
    assert all_failed([]) is None


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_suite(tmp_path_factory.mktemp("suite") / "suite.json", workflows=2)


def test_fail_on_gates_a_campaign_and_its_report(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    args = ["stress", str(suite), "-m", "serial,admission", "--db", str(db), "--jobs", "1", "--json"]
    code, out, err = run(*args, "--fail-on", "gap_mean>1000%", "--fail-on", "errors>0")
    assert code == 0, err
    gaps = {s["group"]["source"]: s["gap"]["mean"] for s in json.loads(out)}
    assert gaps["serial"] > 0.0
    assert gaps["admission"] < 0.01
    code, out, err = run(*args, "--fail-on", "gap_mean>1%")
    assert code == 1 and json.loads(out)  # the summary is printed, then the verdict
    (line,) = [x for x in err.splitlines() if x.startswith("Error:")]
    assert line == f"Error: --fail-on: gap_mean>1%: source serial has gap_mean {100 * gaps['serial']:.4g}%"
    assert run("report", str(db), "--fail-on", "gap_mean>1%")[0] == 1
    assert run("report", str(db), "--fail-on", "safe_rate<100%")[0] == 0


@pytest.mark.parametrize("bad", ["gap_mean", "colour>1", "gap_mean>nan"])
@pytest.mark.parametrize("command", ["stress", "report"])
def test_a_bad_threshold_is_a_usage_error_before_any_work(
    tmp_path: Path, suite: Path, bad: str, command: str
) -> None:
    db = tmp_path / "r.sqlite"
    args = [str(suite), "-m", "serial", "--db", str(db)] if command == "stress" else [str(db)]
    code, _, err = run(command, *args, "--fail-on", bad)
    assert code == 2 and "--fail-on" in err
    assert not db.exists()


def test_a_campaign_whose_rows_all_failed_exits_1_with_the_reasons(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    methods = "stress_helpers:raises,stress_helpers:garbage"
    code, _, err = run("stress", str(suite), "-m", methods, "--db", str(db), "--jobs", "1")
    assert code == 1
    (line,) = [x for x in err.splitlines() if x.startswith("Error:")]
    assert line.startswith("Error: every row failed (12 rows): stress_helpers:raises: 6 × PluginError")
    assert "stress_helpers:garbage: 6 × PluginError: plug-in 'stress_helpers:garbage' returned str" in line
    assert "plug-in bug" in err.split("\nError:")[0]  # and in the errors table above
