"""Online policy factories for the ``score --execute module:function`` and ``run --policy`` tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from peakopt.models import Machine, Workflow
from peakopt.oracle.uncertain.online import OnlinePolicy


def one_at_a_time(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
    """A fresh policy that starts one ready step when nothing runs (serial execution)."""

    def policy(
        now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        return ready[:1] if not running else ()

    return policy


# --- every way a factory or its policy can be wrong (tests/cli/test_plugin_faults.py) -----------------

NOT_CALLABLE = 3


def no_arguments() -> OnlinePolicy:
    """Not a factory: it takes no workflow and machine."""
    raise AssertionError("never called with no arguments")


def a_policy(
    now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
) -> Iterable[str]:
    """A policy given where its factory is expected."""
    return ready


def factory_raises(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
    raise ValueError("no idea\nwhat to do")


def factory_none(workflow: Workflow, machine: Machine | None) -> Any:
    return None


def factory_garbage(workflow: Workflow, machine: Machine | None) -> Any:
    return 42


def _answering(answer: Callable[[int, Sequence[str]], Any]) -> Callable[[Workflow, Machine | None], Any]:
    """A factory whose policy's k-th call (from 0) answers ``answer(k, ready)``."""

    def factory(workflow: Workflow, machine: Machine | None) -> Any:
        calls = [0]

        def policy(
            now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
        ) -> Any:
            calls[0] += 1
            return answer(calls[0] - 1, ready)

        return policy

    return factory


def _raise(k: int, ready: Sequence[str]) -> Any:
    raise RuntimeError("lost my place")


def _raise_later(k: int, ready: Sequence[str]) -> Any:
    if k:
        raise RuntimeError("lost my place")
    return ready[:1]


def _yield_then_raise(k: int, ready: Sequence[str]) -> Any:
    yield ready[0]
    raise RuntimeError("lost my place")


policy_raises = _answering(_raise)
policy_raises_later = _answering(_raise_later)
policy_raises_while_iterated = _answering(_yield_then_raise)
policy_none = _answering(lambda k, ready: None)
policy_number = _answering(lambda k, ready: 7)
policy_garbage = _answering(lambda k, ready: [1, 2])
policy_unknown = _answering(lambda k, ready: ["ghost"])
policy_string = _answering(lambda k, ready: ready[0])  # a step id, not a list of them
policy_twice = _answering(lambda k, ready: [ready[0], ready[0]])
policy_stalls = _answering(lambda k, ready: [])


def _heuristic(online: object) -> Callable[[Workflow, Machine | None], dict[str, float]]:
    """A plug-in heuristic (for ``run --policy``) whose ``online`` attribute is ``online``."""

    def heuristic(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
        return {t.id: 0.0 for t in workflow.tasks}

    heuristic.online = online  # type: ignore[attr-defined]
    return heuristic


heuristic_online_not_callable = _heuristic(NOT_CALLABLE)
heuristic_no_arguments = _heuristic(no_arguments)
heuristic_a_policy = _heuristic(a_policy)
heuristic_factory_raises = _heuristic(factory_raises)
heuristic_factory_none = _heuristic(factory_none)
heuristic_factory_garbage = _heuristic(factory_garbage)
heuristic_policy_raises = _heuristic(policy_raises)
heuristic_policy_raises_later = _heuristic(policy_raises_later)
heuristic_policy_raises_while_iterated = _heuristic(policy_raises_while_iterated)
heuristic_policy_none = _heuristic(policy_none)
heuristic_policy_number = _heuristic(policy_number)
heuristic_policy_garbage = _heuristic(policy_garbage)
heuristic_policy_unknown = _heuristic(policy_unknown)
heuristic_policy_string = _heuristic(policy_string)
heuristic_policy_twice = _heuristic(policy_twice)
heuristic_policy_stalls = _heuristic(policy_stalls)


def heuristic_raises(workflow: Workflow, machine: Machine | None) -> Any:
    """A plug-in without an online form whose plan (the order it runs in) raises."""
    raise ValueError("no plan")
