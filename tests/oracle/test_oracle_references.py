"""References are checked against themselves and the inputs before any gap is computed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oracle_helpers import serial
from strategies import workflows

from peakopt.campaign.store import canonical
from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.instances.native import dump
from peakopt.instances.records import reference_record, write_jsonl, write_references
from peakopt.models import Machine, SolveResult, Task, Workflow, content_hash, nominal_hash
from peakopt.oracle.judge.references import InvalidReference, check, check_references
from peakopt.solver import solve

SUITE = load("bundled:refund")
REFUND, WORKER = SUITE.workflows[0], SUITE.machine("worker")
SAFE = {"lookup_order": 0.0, "fraud_score": 0.0, "history_scan": 4.8, "policy_search": 0.0, "decide": 8.0}
GOOD = SolveResult(
    workflow="refund",
    machine="worker",
    status="optimal",
    makespan=8.6,
    lower_bound=8.6,
    starts=SAFE,
    workflow_hash=content_hash(REFUND),
    machine_hash=nominal_hash(WORKER),  # a reference's machine hash leaves `soft` out
)


def bad(**update: Any) -> SolveResult:
    return GOOD.model_copy(update=update)


def test_a_good_reference_passes() -> None:
    assert check(GOOD, REFUND, WORKER) == []
    assert check(bad(workflow_hash=None, machine_hash=None), REFUND, WORKER) == []  # an old file


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        (bad(status="feasible", makespan=None, starts=None), "status 'feasible' without a makespan"),
        (bad(lower_bound=9.0), "lower_bound 9 is above the makespan 8.6"),
        (bad(lower_bound=-1.0, status="feasible"), "lower_bound -1 is negative"),
        (bad(lower_bound=8.0), "status 'optimal' but lower_bound 8 is not the makespan 8.6"),
    ],
)
def test_claims_that_contradict_themselves(result: SolveResult, problem: str) -> None:
    assert problem in check(result)
    assert problem in check(result, REFUND, WORKER)


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        (bad(makespan=8.0, lower_bound=8.0), "makespan 8, but its starts give 8.6"),
        (bad(starts=None), "a makespan of 8.6 without starts"),
        (bad(starts={k: v for k, v in SAFE.items() if k != "decide"}), "task 'decide' has no start"),
        (bad(starts=SAFE | {"notify": 8.6}), "a start for unknown task 'notify'"),
        (bad(starts=SAFE | {"decide": 1.0}), "its starts are invalid: fraud_score -> decide"),
        (bad(starts=SAFE | {"history_scan": 0.0}), "its starts are unsafe"),
        (bad(workflow_hash="0" * 32), "solved for a different workflow under the same name"),
        (bad(machine_hash="0" * 32), "solved for a different machine under the same name"),
        (bad(lower_bound=99.0, makespan=99.0, status="feasible"), "above the serial makespan"),
    ],
)
def test_claims_the_inputs_contradict(result: SolveResult, problem: str) -> None:
    assert any(problem in p for p in check(result, REFUND, WORKER)), check(result, REFUND, WORKER)


def test_the_check_is_scale_invariant() -> None:
    # the same data in microseconds: the same relative error (1 µs in 8.6 s) is caught in both units
    micro = Workflow(
        id="refund", tasks=[t.model_copy(update={"duration": t.length * 1e6}) for t in REFUND.tasks]
    )
    starts = {k: v * 1e6 for k, v in SAFE.items()}
    result = bad(makespan=8.6e6, lower_bound=8.6e6, starts=starts, workflow_hash=None)
    assert check(result, micro, WORKER) == []
    off = result.model_copy(update={"makespan": 8.6e6 - 1, "lower_bound": 8.6e6 - 1})
    assert any("but its starts give" in p for p in check(off, micro, WORKER))
    assert any("but its starts give" in p for p in check(bad(makespan=8.6 - 1e-6), REFUND, WORKER))


PAIRS = [(w, m) for w in SUITE.workflows for m in SUITE.machines]


def test_check_references_names_the_file_line_and_pair() -> None:
    lines = [(1, GOOD), (3, bad(workflow_hash="f" * 32))]
    with pytest.raises(InvalidReference, match=r"refs.jsonl: line 3: reference for workflow 'refund' on "):
        check_references("refs.jsonl", lines, PAIRS)
    # a pair the inputs do not hold is not used: only its own claims are checked
    other = bad(workflow="elsewhere", workflow_hash="f" * 32)
    assert check_references("r", [(1, GOOD), (2, other)], PAIRS) == {
        ("refund", "worker"): GOOD,
        ("elsewhere", "worker"): other,
    }
    with pytest.raises(InvalidReference, match=r"line 2: .* is above the makespan"):
        check_references("r", [(1, GOOD), (2, other.model_copy(update={"lower_bound": 9}))], ())


@settings(max_examples=60, deadline=None)
@given(workflows(max_tasks=6), st.floats(min_value=1e-3, max_value=1e3))
@example(  # subnormal durations: the sum's shortest decimal is not the decimals' sum (hypothesis)
    Workflow(
        id="w",
        tasks=(
            Task(id="t0", duration=2.2250738585e-313),
            Task(id="t1", duration=2.2250738585e-313, depends_on=("t0",)),
        ),
    ),
    1.0,
)
def test_a_serial_reference_passes_and_a_wrong_makespan_never_does(workflow: Workflow, scale: float) -> None:
    machine = Machine(name="m", capacity={"cpu": 100.0, "memory_mb": 100.0})
    starts = serial(workflow).starts
    makespan = max((starts[t.id] + t.length for t in workflow.tasks), default=0.0)
    result = SolveResult(workflow="w", machine="m", status="feasible", makespan=makespan, starts=starts)
    assert check(result, workflow, machine) == []
    wrong = result.model_copy(update={"makespan": makespan * (1 + 1e-6) + 1e-6 * scale})
    assert any("but its starts give" in p for p in check(wrong, workflow, machine))


def test_solve_writes_the_content_hashes() -> None:
    result = solve(REFUND, WORKER, time_limit=10, workers=1)
    assert result.workflow_hash == content_hash(REFUND) and result.machine_hash == nominal_hash(WORKER)
    assert check(result, REFUND, WORKER) == []
    # the optimum overflows nothing: it stays valid whichever resources are soft
    assert WORKER.soft == ("cpu",) and check(result, REFUND, WORKER.as_hard()) == []
    other = WORKER.model_copy(update={"capacity": {"cpu": 4, "memory_mb": 4096}})
    assert check(result, REFUND, other) != []


def test_the_content_hash_is_the_one_results_stores_are_keyed_by() -> None:
    # moved from solver/store.py to peakopt.models: existing stores keep their keys
    old = hashlib.sha256(canonical(dump(REFUND)).encode()).hexdigest()[:32]
    assert content_hash(REFUND) == old


def test_the_content_hash_ignores_formatting_but_not_content() -> None:
    same = Workflow.model_validate(json.loads(json.dumps(REFUND.model_dump(mode="json"))))
    assert content_hash(same) == content_hash(REFUND)
    longer = [*REFUND.tasks[:-1], REFUND.tasks[-1].model_copy(update={"duration": 0.7})]
    assert content_hash(REFUND.model_copy(update={"tasks": tuple(longer)})) != content_hash(REFUND)


# --- every command that reads references refuses one for another workflow under the same id ---

OTHER = Workflow(id="refund", tasks=[Task(id="lookup_order", duration=1.0)])


def _stale(tmp_path: Path) -> Path:
    """A reference solved for a different 'refund' (its hash and its starts are another workflow's)."""
    path = tmp_path / "refs.jsonl"
    write_references(path, [solve(OTHER, WORKER, time_limit=10, workers=1)])
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stderr


def test_every_command_refuses_a_stale_reference(tmp_path: Path) -> None:
    refs = _stale(tmp_path)
    answers = tmp_path / "answers.jsonl"
    write_jsonl(answers, [{"workflow": "refund", "source": "m", "starts": SAFE}])
    scores = tmp_path / "scores.jsonl"
    assert _run("score", "bundled:refund", "-s", str(answers), "-o", str(scores))[0] == 0
    picture, html, db = (str(tmp_path / name) for name in ("x.png", "r.html", "r.sqlite"))
    commands = [
        ["score", "bundled:refund", "-s", str(answers), "-r", str(refs)],
        [
            "plot",
            "bundled:refund",
            "--machine",
            "worker",
            "--optimal",
            "--reference",
            str(refs),
            "-o",
            picture,
        ],
        ["report", str(scores), "--suite", "bundled:refund", "--reference", str(refs), "-o", html],
        ["stress", "bundled:refund", "-m", "serial", "--db", db, "-r", str(refs)],
    ]
    for args in commands:
        code, err = _run(*args)
        assert code == 1, (args, err)
        assert err.startswith(
            f"Error: {refs}: line 1: reference for workflow 'refund' on machine 'worker': "
        ), err
        assert "different workflow under the same name" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    assert not Path(html).exists() and not Path(picture).exists()


def test_an_old_reference_with_wrong_starts_is_refused_too(tmp_path: Path) -> None:
    refs = tmp_path / "refs.jsonl"
    old = reference_record(solve(OTHER, WORKER, time_limit=10, workers=1))
    del old["workflow_hash"], old["machine_hash"]
    write_jsonl(refs, [old])
    answers = tmp_path / "answers.jsonl"
    write_jsonl(answers, [{"workflow": "refund", "source": "m", "starts": SAFE}])
    code, err = _run("score", "bundled:refund", "-s", str(answers), "-r", str(refs))
    assert code == 1 and "line 1: reference for workflow 'refund'" in err and "has no start" in err
