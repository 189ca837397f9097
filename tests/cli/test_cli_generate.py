"""generate and prompt through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from peakopt.cli.main import cli
from peakopt.instances import bundled, load


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_generate_reproduces_the_bundled_default_byte_for_byte(tmp_path: Path) -> None:
    code, out, err = run("generate", "--seed", "0", "-o", str(tmp_path / "suites"))
    assert code == 0, err
    assert out == ""
    assert (tmp_path / "suites" / "suite.json").read_bytes() == bundled("default").read_bytes()
    assert "300 workflows" in err and "small" in err


def test_generate_small_suite_to_stdout_and_to_a_file(tmp_path: Path) -> None:
    code, out, _ = run("generate", "--seed", "4", "--easy", "2", "--medium", "1", "--hard", "0")
    assert code == 0
    document = json.loads(out)
    assert len(document["workflows"]) == 3 and document["meta"]["generator"]["seed"] == 4
    target = tmp_path / "mine.json"
    code, _, _ = run(
        "generate", "--seed", "4", "--easy", "2", "--medium", "1", "--hard", "0", "-o", str(target)
    )
    assert code == 0 and target.read_text() == out


def test_generate_piecewise_option() -> None:
    code, out, _ = run("generate", "--easy", "0", "--medium", "0", "--hard", "5", "--piecewise", "1")
    assert code == 0
    assert '"profile"' in out


def test_generate_stress_instances(tmp_path: Path) -> None:
    code, _, err = run("generate", "--tasks", "40", "--kind", "rcpsp", "--count", "2", "-o", str(tmp_path))
    assert code == 0, err
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["rcpsp-n40-s0.json", "rcpsp-n40-s1.json"]
    suite = load(tmp_path / files[1])
    assert len(suite.workflows[0].tasks) == 40 and suite.machines[0].name == "rs-0.5"
    code, out, _ = run("generate", "--tasks", "30", "--width", "5", "--resources", "3", "--strength", "0.2")
    assert code == 0
    document = json.loads(out)
    assert document["machines"][0]["name"] == "rs-0.2"
    assert set(document["machines"][0]["capacity"]) == {"cpu", "memory_mb", "R3"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--width", "4"], "--width needs --tasks"),
        (["--easy", "0", "--medium", "0", "--hard", "0"], "nothing to generate"),
        (["--tasks", "10", "--count", "2"], "--count above 1 needs -o DIR"),
        (["--tasks", "0"], "--tasks"),
        (["--strength", "2", "--tasks", "5"], "--strength"),
    ],
)
def test_generate_usage_errors(args: list[str], message: str) -> None:
    code, _, err = run("generate", *args)
    assert code == 2
    assert message in err


def test_generate_output_that_is_a_file_not_a_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    code, _, err = run("generate", "--easy", "1", "--medium", "0", "--hard", "0", "-o", str(blocker))
    assert code == 1 and err == f"Error: -o {blocker}: exists and is not a directory\n"


def test_prompt_writes_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "prompts.jsonl"
    code, stdout, err = run("prompt", "bundled:refund", "-o", str(out))
    assert code == 0, err
    assert stdout == ""
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["setting"] == "rasc" and record["machine"] == "worker"
    assert "1 prompt (rasc)" in err


def test_prompt_to_stdout_for_one_machine() -> None:
    code, out, _ = run("prompt", "bundled:default", "--setting", "no-profile", "--machine", "small")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 300 and {r["machine"] for r in records} == {"small"}
    assert all("resource_costs" not in r["context"] for r in records)


def test_prompt_errors(tmp_path: Path) -> None:
    code, _, err = run("prompt", "bundled:refund", "--machine", "huge")
    assert code == 2 and "no machine 'huge'" in err
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"id": "w", "tasks": [{"id": "a", "duration": 1}]}))
    code, _, err = run("prompt", str(bare))
    assert code == 1
    assert err.startswith("Error: ") and "prompts need machine profiles" in err and len(err.splitlines()) == 1
    code, _, err = run("prompt", str(tmp_path / "missing.json"))
    assert code == 1 and "no such file" in err


@pytest.mark.parametrize("command", ["generate", "prompt"])
def test_help_has_an_example(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0 and "Example: peakopt " + command in out


def test_generate_with_a_custom_catalog(tmp_path: Path) -> None:
    tool = {
        "class": "lightweight",
        "duration_s": [0.1, 0.5],
        "cpu_avg": [0.1, 0.2],
        "cpu_peak": [0.2, 0.4],
        "memory_mb": [50, 100],
    }
    servers = [
        {"server": f"s{i}", "category": "utilities", "tools": [{"tool": "a", **tool}, {"tool": "b", **tool}]}
        for i in range(3)
    ]
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps({"servers": servers}))
    code, out, err = run("generate", "--catalog", str(catalog), "--easy", "3", "--medium", "2", "--hard", "1")
    assert code == 0, err
    suite = json.loads(out)
    tools = {t["tool"] for w in suite["workflows"] for t in w["tasks"]}
    assert tools <= {f"s{i}.{n}" for i in range(3) for n in "ab"}
    catalog.write_text("{}")
    code, _, err = run("generate", "--catalog", str(catalog))
    assert code == 1 and err.startswith(f"Error: {catalog}") and "servers" in err
    code, _, err = run("generate", "--catalog", str(tmp_path / "none.json"))
    assert code == 1 and "no such file" in err


def test_generate_stats_prints_the_floor_and_max_trivial_keeps_it_under_the_target(tmp_path: Path) -> None:
    from peakopt.campaign.floor import solved_references, suite_floor

    small = ["--easy", "6", "--medium", "3", "--hard", "1"]
    runner = CliRunner()
    plain = runner.invoke(cli, ["generate", *small, "--stats", "-o", str(tmp_path / "a.json")])
    assert plain.exit_code == 0, plain.output
    drawn = load(str(tmp_path / "a.json"))
    before = suite_floor(drawn, solved_references(drawn))
    assert f"trivial answers: {before.trivial} of 30 pairs" in plain.output
    target = (before.trivial - 4) / 30
    hardened = runner.invoke(
        cli, ["generate", *small, "--max-trivial", f"{target}", "-o", str(tmp_path / "b.json")]
    )
    assert hardened.exit_code == 0, hardened.output
    suite = load(str(tmp_path / "b.json"))
    found = suite_floor(suite, solved_references(suite))  # checked anew, not read from the output
    assert found.trivial <= target * 30 < before.trivial
    assert f"trivial answers: {found.trivial} of 30 pairs" in hardened.output
    assert suite.machines == drawn.machines and suite.meta["trivial_redrawn"]["redrawn"] >= 1
    assert [w.meta["tier"] for w in suite.workflows] == [w.meta["tier"] for w in drawn.workflows]
    # reproducible: the same command draws the same suite
    again = runner.invoke(cli, ["generate", *small, "--max-trivial", f"{target}"])
    assert json.loads(again.stdout) == json.loads((tmp_path / "b.json").read_text())


def test_generate_stats_is_for_suites() -> None:
    result = CliRunner().invoke(cli, ["generate", "--tasks", "10", "--max-trivial", "0.5"])
    assert result.exit_code == 2 and "--max-trivial is for suites" in result.output
