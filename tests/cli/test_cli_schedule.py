"""``peakopt schedule`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from heuristics_helpers import judged
from paths import J30

from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.instances.machine_files import load_machines
from peakopt.models import Machine, Schedule

REFUND = load("bundled:refund")
WORKFLOW = {
    "id": "w",
    "tasks": [
        {"id": "a", "duration": 2, "demand": {"cpu": 3}},
        {"id": "b", "duration": 1, "demand": {"cpu": 2}},
    ],
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def test_json_records_one_per_method_and_judged_safe_by_the_oracle() -> None:
    code, out, err = run(
        "schedule", "bundled:refund", "-m", "asap,fbi:sgs:parallel:lft", "--method", "admission", "--json"
    )
    assert code == 0, err
    found = records(out)
    assert [r["source"] for r in found] == ["asap", "fbi:sgs:parallel:lft", "admission"]
    workflow, machine = REFUND.workflows[0], REFUND.machines[0]
    for record in found:
        assert set(record) == {"workflow", "machine", "source", "starts"}
        assert (record["workflow"], record["machine"]) == ("refund", "worker")
        score = judged(workflow, machine, Schedule(**record))
        assert score.safe == (record["source"] != "asap")
    assert "fbi:sgs:parallel:lft" in err and "makespan" in err and "8.6" in err


def test_output_file_and_the_table_on_stderr(tmp_path: Path) -> None:
    target = tmp_path / "schedules.jsonl"
    code, out, err = run(
        "schedule", str(J30 / "j301_1.sm"), "-m", "sgs:serial:lft,sgs:serial:lft", "-o", str(target)
    )
    assert code == 0, err
    assert out == ""
    (record,) = records(target.read_text())
    assert record["machine"] == "psplib" and len(record["starts"]) == 30
    assert "sgs:serial:lft" in err and "yes" in err


def test_default_method_and_seeds(tmp_path: Path) -> None:
    first = run(
        "schedule", str(J30 / "j3013_2.sm"), "-m", "sampling:20,sgs:parallel:random", "--seed", "3", "--json"
    )
    again = run(
        "schedule", str(J30 / "j3013_2.sm"), "-m", "sampling:20,sgs:parallel:random", "--seed", "3", "--json"
    )
    assert first[0] == 0 and first[1] == again[1]
    code, out, _ = run("schedule", "bundled:refund", "--json")
    assert code == 0 and records(out)[0]["source"] == "best:fast"


def test_no_machine_blind_methods_run_and_resource_aware_ones_ask_for_one(tmp_path: Path) -> None:
    path = write(tmp_path / "w.json", WORKFLOW)
    code, out, err = run("schedule", path, "-m", "asap,serial,cap:1", "--json")
    assert code == 0, err
    assert [r["machine"] for r in records(out)] == [None, None, None]
    assert records(out)[0]["starts"] == {"a": 0.0, "b": 0.0}
    code, _, err = run("schedule", path, "-m", "asap,sgs:serial:lft")
    assert code == 2
    assert "method 'sgs:serial:lft' is resource-aware and an input defines no machine" in err
    assert "--machine FILE|NAME" in err


def test_machine_from_a_file_or_by_name(tmp_path: Path) -> None:
    path = write(tmp_path / "w.json", WORKFLOW)
    one = write(tmp_path / "m.json", {"name": "four", "capacity": {"cpu": 4}})
    two = write(
        tmp_path / "ms.json",
        [{"name": "five", "capacity": {"cpu": 5}}, {"name": "tiny", "capacity": {"cpu": 1}}],
    )
    code, out, err = run(
        "schedule", path, "-m", "fbi:sgs:serial:lft", "--machine", one, "--machine", two, "--json"
    )
    assert code == 0, err
    found = {r["machine"]: r["starts"] for r in records(out)}
    assert found == {"four": {"a": 0.0, "b": 2.0}, "five": {"a": 0.0, "b": 0.0}, "tiny": {"a": 0.0, "b": 2.0}}
    code, out, _ = run(
        "schedule", "bundled:refund", str(J30 / "j301_1.sm"), "--machine", "psplib", "-m", "asap", "--json"
    )
    assert code == 0 and {r["machine"] for r in records(out)} == {"psplib"}


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    for args, message in [
        (("-m", "sgs:serial:bogus"), "unknown rule 'bogus'"),
        (("-m", "warp"), "unknown method 'warp'"),
        (
            ("--machine", "nowhere"),
            "'nowhere' is neither a machine of the inputs (they define: worker) nor a file",
        ),
        (("-m", ","), "name at least one method"),
    ]:
        code, _, err = run("schedule", "bundled:refund", *args)
        assert code == 2 and message in err, err


def test_failures_are_one_error_line_and_keep_the_output(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    code, _, err = run(
        "schedule", "bundled:refund", "-m", "asap,heuristics_plugin_examples:misses", "-o", str(target)
    )
    assert code == 1
    assert err.startswith("Error: plug-in 'heuristics_plugin_examples:misses' returned no start")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert target.read_text() == "old\n"
    bad = write(tmp_path / "bad.json", {"name": "m", "capacity": {"cpu": -1}})
    code, _, err = run("schedule", "bundled:refund", "--machine", bad)
    assert code == 1 and err.startswith(f"Error: {bad}: ") and "capacity" in err


def test_list_needs_no_path() -> None:
    code, out, _ = run("schedule", "--list")
    assert code == 0
    lines = out.splitlines()
    assert "fbi:sgs:parallel:lft" in lines and "cap:K" in lines


def test_many_schedules_are_summarised_per_method() -> None:
    files = [str(p) for p in sorted(J30.glob("j301_*.sm"))]
    code, out, err = run("schedule", *files, "-m", "sgs:serial:lft,sgs:parallel:lft,admission,asap", "--json")
    assert code == 0, err
    assert len(records(out)) == 4 * len(files) > 30
    assert "means over workflows" in err
    # one row per machine × method, the oracle's aggregate as score prints it
    for method in ("sgs:serial:lft", "sgs:parallel:lft", "admission", "asap"):
        (line,) = [line for line in err.splitlines() if f"psplib / {method} " in line]
        assert f"│ {len(files):>4} │" in line
    (sgs,) = [line for line in err.splitlines() if "psplib / sgs:serial:lft " in line]
    assert "100.0%" in sgs  # a serial SGS schedule is always safe
    assert {r["workflow"] for r in records(out)} == {Path(f).stem for f in files}


def test_load_machines_reads_suites_and_psplib() -> None:
    assert load_machines("bundled:refund") == REFUND.machines
    (psplib,) = load_machines(J30 / "j301_1.sm")
    assert isinstance(psplib, Machine) and psplib.name == "psplib"


def test_unconstrained_resources_are_warned_about(tmp_path: Path) -> None:
    path = write(tmp_path / "w.json", WORKFLOW)
    machine = write(tmp_path / "m.json", {"name": "gpu-only", "capacity": {"gpu": 1}})
    code, out, err = run("schedule", path, "--machine", machine, "-m", "sgs:serial:lft", "--json")
    assert code == 0
    assert "Warning: machine 'gpu-only' does not limit cpu" in err
    assert records(out)[0]["starts"] == {"a": 0.0, "b": 0.0}
