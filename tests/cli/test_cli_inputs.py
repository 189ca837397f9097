"""validate, convert and schema through the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from paths import J30, PATTERSON

from peakopt.cli.main import cli
from peakopt.instances import load


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_validate_reports_counts_per_file() -> None:
    code, out, err = run("validate", "bundled:refund", str(J30 / "j301_1.sm"), str(PATTERSON / "pat1.rcp"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "OK bundled:refund: 1 workflow (5 tasks), 1 machine"
    assert lines[1].endswith("j301_1.sm: 1 workflow (30 tasks), 1 machine")
    assert lines[2].endswith("pat1.rcp: 1 workflow (12 tasks), 1 machine")


def test_validate_goes_on_after_a_bad_file_and_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, out, err = run("validate", str(bad), "bundled:refund")
    assert code == 1
    assert out.startswith("OK bundled:refund")
    assert err.startswith(f"Error: {bad}: not valid JSON")


def test_validate_json_output() -> None:
    code, out, _ = run("validate", "--json", "bundled:refund", "nope.json")
    assert code == 1
    ok, bad = (json.loads(line) for line in out.splitlines())
    assert ok == {
        "path": "bundled:refund",
        "ok": True,
        "workflows": 1,
        "tasks": 5,
        "machines": ["worker"],
        "warnings": [],
    }
    assert bad["ok"] is False and "no such file" in bad["error"]


def test_validate_warns_about_unconstrained_resources(tmp_path: Path) -> None:
    path = tmp_path / "gpu.json"
    path.write_text(
        json.dumps(
            {
                "machines": [{"name": "m", "capacity": {"cpu": 2}}],
                "workflows": [{"id": "w", "tasks": [{"id": "a", "duration": 1, "demand": {"gpu": 1}}]}],
            }
        )
    )
    code, _, err = run("validate", str(path))
    assert code == 0
    assert "Warning:" in err and "does not limit gpu" in err


def test_convert_psplib_to_suite_and_back(tmp_path: Path) -> None:
    out = tmp_path / "j301_1.json"
    code, _, err = run("convert", str(J30 / "j301_1.sm"), "-o", str(out))
    assert code == 0, err
    assert load(out) == load(J30 / "j301_1.sm")


def test_convert_to_rasc_with_avg_cpu(tmp_path: Path) -> None:
    rasc = tmp_path / "refund.rasc.json"
    assert run("convert", "bundled:refund", "-o", str(rasc), "--to", "rasc")[0] == 0
    document = json.loads(rasc.read_text())
    assert document["dependency_structure"]["decide"] == [
        "lookup_order",
        "fraud_score",
        "history_scan",
        "policy_search",
    ]
    back = tmp_path / "back.json"
    assert run("convert", str(rasc), "-o", str(back), "--cpu", "avg")[0] == 0
    assert load(back).workflows[0].task("fraud_score").demand["cpu"] == 1.5


def test_convert_refuses_what_the_format_cannot_hold(tmp_path: Path) -> None:
    code, _, err = run("convert", "bundled:refund", "-o", str(tmp_path / "x.jsonl"))
    assert code == 1
    assert err.startswith("Error:") and "JSON Lines holds workflows only" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_schema() -> None:
    code, out, _ = run("schema")
    assert code == 0
    schema = json.loads(out)
    assert schema["title"] == "Workflow" and "tasks" in schema["properties"]
    code, out, _ = run("schema", "reference")
    assert "lower_bound" in json.loads(out)["properties"]
    assert run("schema", "nonsense")[0] == 2


def test_usage_error_exit_code() -> None:
    assert run("validate")[0] == 2
    assert run("convert", "bundled:refund")[0] == 2


def test_help_has_examples() -> None:
    for command in ("validate", "convert", "schema"):
        code, out, _ = run(command, "--help")
        assert code == 0 and "Example:" in out


def test_validate_stats_gives_the_floor_of_each_suite() -> None:
    result = CliRunner().invoke(cli, ["validate", "bundled:refund", "--stats", "--json"])
    assert result.exit_code == 0, result.output
    floor = json.loads(result.output)["floor"]
    # refund's five steps on its worker: no trivial answer is optimal (serial is safe, 0.827 of it)
    assert floor["pairs"] == 1 and floor["hard"] == 1 and floor["trivial"] == 0
    assert floor["answers"]["serial"]["safe"] == 1 and 0 < floor["answers"]["serial"]["efficiency"] < 1
    text = CliRunner().invoke(cli, ["validate", "bundled:refund", "--stats"]).output
    assert "trivial answers: 0 of 1 pair solved" in text and "hard split: 1 pair" in text
