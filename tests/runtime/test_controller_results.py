"""What a callable step returns: an int is its exit code, anything else a result the controller keeps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from peakopt.models import Machine, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.runtime.controller import Controller
from peakopt.runtime.policies import named_policy
from peakopt.runtime.trace import load_trace, trace_json

BOX = Machine(name="box", capacity={"memory_mb": 300})
#: "a", then "b" after it: a failing "a" skips "b".
CHAIN = Workflow(
    id="w",
    tasks=(
        Task(id="a", duration=0.01, demand={"memory_mb": 100}),
        Task(id="b", duration=0.01, demand={"memory_mb": 100}, depends_on=("a",)),
    ),
)


class Opaque:
    """An object with no JSON form: kept as it is, never written into the trace."""


OPAQUE = Opaque()


def returning(value: Any) -> Callable[[], Any]:
    async def step() -> Any:
        await asyncio.sleep(0)
        return value

    return step


def raising() -> Callable[[], Any]:
    async def step() -> Any:
        await asyncio.sleep(0)
        raise RuntimeError("tool broke")

    return step


async def noop() -> None:
    return None


#: (what the step returns, its status, exit code, error, the result kept)
CASES: list[tuple[str, Callable[[], Any], str, int | None, str | None, Any]] = [
    ("none", returning(None), "ok", 0, None, None),
    ("zero", returning(0), "ok", 0, None, None),
    ("three", returning(3), "failed", 3, "returned 3", None),
    ("minus", returning(-2), "failed", -2, "returned -2", None),
    ("dict", returning({"rows": [1, 2], "ok": True}), "ok", 0, None, {"rows": [1, 2], "ok": True}),
    ("str", returning("the answer"), "ok", 0, None, "the answer"),
    ("empty-str", returning(""), "ok", 0, None, ""),
    ("list", returning([1, "two", None]), "ok", 0, None, [1, "two", None]),
    ("object", returning(OPAQUE), "ok", 0, None, OPAQUE),
    ("true", returning(True), "ok", 0, None, True),
    ("false", returning(False), "ok", 0, None, False),
    ("float", returning(1.5), "ok", 0, None, 1.5),
    ("raising", raising(), "failed", None, "RuntimeError: tool broke", None),
]


@pytest.mark.parametrize(
    ("case", "step", "status", "code", "error", "result"), CASES, ids=[c[0] for c in CASES]
)
def test_a_callable_steps_return_value_is_an_exit_code_or_a_kept_result(
    tmp_path: Any,
    case: str,
    step: Callable[[], Any],
    status: str,
    code: int | None,
    error: str | None,
    result: Any,
) -> None:
    policy = named_policy("admission", CHAIN, BOX)
    controller = Controller(CHAIN, BOX, policy, {"a": step, "b": noop}, name="admission")
    trace = asyncio.run(controller.run())
    first, second = trace.steps
    assert (first.status, first.exit_code, first.error) == (status, code, error)
    assert second.status == ("ok" if status == "ok" else "skipped")
    assert trace.status == ("ok" if status == "ok" else "failed")
    if status == "ok":
        kept = controller.results["a"]
        assert kept == result and type(kept) is type(result)  # True stays True, not an exit code
        assert controller.results["b"] is None
    else:
        assert "a" not in controller.results
    # the trace is a trace whatever the steps returned: written, read back and judged
    path = tmp_path / "trace.json"
    path.write_text(trace_json(trace))
    assert load_trace(path) == trace
    workflow, schedule = trace.realised()
    assert evaluate(workflow, BOX, schedule).safe


def test_results_are_kept_by_step_and_reset_by_each_run() -> None:
    steps = {"a": returning({"n": 1}), "b": returning(["x"])}
    controller = Controller(CHAIN, BOX, named_policy("admission", CHAIN, BOX), steps)
    asyncio.run(controller.run())
    assert controller.results == {"a": {"n": 1}, "b": ["x"]}
    asyncio.run(controller.run())
    assert controller.results == {"a": {"n": 1}, "b": ["x"]}
