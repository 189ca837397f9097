"""Plug-ins that misbehave, for ``score --execute module:function`` and ``run --policy module:function``.

A factory that is not one (not callable, takes no arguments, is a policy itself), raises, or
returns what is not a policy is refused with one ``Error:`` line naming the plug-in and the rule,
and nothing is written. A policy that raises (at once, later, while its answer is read), answers
something that is not a list of ready step ids (None, a number, numbers, an unknown id, a bare
id, an id twice) or stalls is, in the simulator, an invalid row saying why; under the controller,
a failed run whose trace is written with the fault recorded, then one ``Error:`` line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import jsonl
from click.testing import CliRunner

from peakopt.cli.main import cli
from peakopt.runtime.trace import load_trace

MODULE = "online_policy_examples"

#: Factories that are not usable, and a word of the rule their message must give.
FACTORIES = [
    ("NOT_CALLABLE", "not callable"),
    ("no_arguments", "factory"),
    ("a_policy", "factory"),
    ("factory_raises", "ValueError: no idea what to do"),
    ("factory_none", "returned None"),
    ("factory_garbage", "returned int 42"),
]

#: Policies that misbehave while a plan runs, and a word of the rule their message must give.
POLICIES = [
    ("policy_raises", "RuntimeError: lost my place"),
    ("policy_raises_later", "RuntimeError: lost my place"),
    ("policy_raises_while_iterated", "RuntimeError: lost my place"),
    ("policy_none", "returned None"),
    ("policy_number", "returned int 7"),
    ("policy_garbage", "started 1"),
    ("policy_unknown", "'ghost'"),
    ("policy_string", "returned str"),
    ("policy_twice", "twice"),
]

#: Heuristic plug-ins of ``run --policy`` refused before anything runs: their online form (or plan)
#: is unusable, or they cannot be loaded at all.
RUN_REFUSED = [(f"heuristic_{name}", rule) for name, rule in FACTORIES if name != "NOT_CALLABLE"] + [
    ("heuristic_online_not_callable", "not a policy factory"),
    ("NOT_CALLABLE", "not callable"),
    ("heuristic_raises", "ValueError: no plan"),
    ("nothing_here", "no attribute"),
]
#: ... and those whose policy fails mid-run (a stalling policy too).
RUN_FAULTS = [(f"heuristic_{name}", rule) for name, rule in POLICIES] + [
    ("heuristic_policy_stalls", "stalled")
]


def invoke(*args: str) -> tuple[int, str, str]:
    """``peakopt ARGS...``: exit code, stdout, stderr; an exception click did not handle fails."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def one_error(err: str, name: str, rule: str) -> str:
    """The stderr's ``Error:`` line (exactly one), which names the plug-in and the rule."""
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert name in errors[0] and rule in errors[0], errors[0]
    return errors[0]


def plans(tmp_path: Path) -> Path:
    path = tmp_path / "plans.jsonl"
    path.write_text(json.dumps({"workflow": "refund", "source": "anything", "starts": {}}) + "\n")
    return path


@pytest.mark.parametrize("samples", [(), ("--samples", "3")], ids=["nominal", "sampled"])
@pytest.mark.parametrize(("name", "rule"), FACTORIES)
def test_score_refuses_a_factory_that_is_not_one(
    tmp_path: Path, name: str, rule: str, samples: tuple[str, ...]
) -> None:
    out = tmp_path / "scores.jsonl"
    out.write_text("old\n")
    spec = f"{MODULE}:{name}"
    code, _, err = invoke(
        "score", "bundled:refund", "-s", str(plans(tmp_path)), "--execute", spec, *samples, "-o", str(out)
    )
    assert code == 1
    one_error(err, spec, rule)
    assert out.read_text() == "old\n"


@pytest.mark.parametrize("samples", [(), ("--samples", "3")], ids=["nominal", "sampled"])
@pytest.mark.parametrize(("name", "rule"), POLICIES)
def test_score_makes_a_misbehaving_policy_an_invalid_row(
    tmp_path: Path, name: str, rule: str, samples: tuple[str, ...]
) -> None:
    spec = f"{MODULE}:{name}"
    code, out, err = invoke(
        "score", "bundled:refund", "-s", str(plans(tmp_path)), "--execute", spec, *samples, "--json"
    )
    assert code == 0, err
    (row,) = jsonl(out)
    if samples:
        figures = row["monte_carlo"]
        assert not figures["scored"] and spec in figures["message"] and rule in figures["message"], figures
    else:
        assert not row["valid"] and any(spec in r and rule in r for r in row["reasons"]), row["reasons"]


def workflow(tmp_path: Path) -> Path:
    tasks = [
        {
            "id": f"s{k}",
            "duration": 0.05,
            "demand": {"cpu": 1},
            "depends_on": [],
            "meta": {"command": "sleep 0.05"},
        }
        for k in range(3)
    ]
    path = tmp_path / "wf.json"
    path.write_text(
        json.dumps(
            {
                "machines": [{"name": "box", "capacity": {"cpu": 2}}],
                "workflows": [{"id": "w", "tasks": tasks}],
            }
        )
    )
    return path


@pytest.mark.parametrize(("name", "rule"), RUN_REFUSED)
def test_run_refuses_a_plug_in_whose_online_form_is_unusable(tmp_path: Path, name: str, rule: str) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text("old\n")
    spec = f"{MODULE}:{name}"
    code, _, err = invoke("run", str(workflow(tmp_path)), "--policy", spec, "-o", str(trace))
    assert code in (1, 2)
    one_error(err, spec, rule)
    assert trace.read_text() == "old\n"


@pytest.mark.parametrize(("name", "rule"), RUN_FAULTS)
def test_run_records_a_policy_fault_mid_run_in_a_failed_trace(tmp_path: Path, name: str, rule: str) -> None:
    trace_path = tmp_path / "trace.json"
    trace_path.write_text("old\n")
    spec = f"{MODULE}:{name}"
    code, _, err = invoke("run", str(workflow(tmp_path)), "--policy", spec, "-o", str(trace_path))
    assert code == 1
    line = one_error(err, spec, rule)
    trace = load_trace(trace_path)
    assert trace.status == "failed" and trace.error is not None, trace
    assert spec in trace.error and rule in trace.error and trace.error in line
    assert all(s.status in ("ok", "skipped") for s in trace.steps)  # no step failed: the policy did
    if name == "heuristic_policy_raises_later":
        assert [s.status for s in trace.steps] == ["ok", "skipped", "skipped"]
