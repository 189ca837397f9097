"""User heuristics: ``module:function`` or an entry point of the group ``peakopt.heuristics``.

A plug-in is a callable ``(workflow, machine) -> Schedule | Mapping[str, float]``
that may also take a ``seed`` keyword. Whatever it does wrong — failing to
import, raising, returning something that is not a start per task — becomes a
:class:`PluginError` naming it. Whether its starts are any good (dependencies,
overflow, negative times) is the oracle's call, not this module's.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from numbers import Real
from typing import Any

from peakopt.models import Machine, Schedule, Workflow
from peakopt.solver.heuristics.errors import PluginError
from peakopt.solver.heuristics.identity import plugin_code

#: The entry-point group that installed packages register heuristics under.
GROUP = "peakopt.heuristics"


@dataclass(frozen=True)
class Plugin:
    """A loaded user heuristic.

    Parameters
    ----------
    name
        How it was named: ``module:function`` or the entry point's name.
    func
        The callable.
    code
        The identity of its code (see :mod:`peakopt.solver.heuristics.identity`).
    """

    name: str
    func: Callable[..., Any]
    code: str = ""

    @property
    def takes_seed(self) -> bool:
        """Whether the callable accepts a ``seed`` keyword."""
        try:
            params = inspect.signature(self.func).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            or (p.name == "seed" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
            for p in params
        )

    def __call__(self, workflow: Workflow, machine: Machine | None, *, seed: int = 0) -> Schedule:
        """Run the plug-in and check that it returned one start per task.

        Raises
        ------
        PluginError
            When it raises or returns anything but a start for every task.
        """
        kwargs = {"seed": seed} if self.takes_seed else {}
        try:
            result = self.func(workflow, machine, **kwargs)
        except Exception as exc:
            raise PluginError(f"plug-in {self.name!r} raised {_describe(exc)}") from exc
        starts = checked_starts(self.name, workflow, result)
        return Schedule(
            workflow=workflow.id,
            machine=machine.name if machine is not None else None,
            starts=starts,
            source=self.name,
        )


def checked_starts(name: str, workflow: Workflow, result: object) -> dict[str, float]:
    """The starts of a plug-in's result, or a :class:`PluginError` saying what is wrong."""
    if isinstance(result, Schedule):
        if result.workflow != workflow.id:
            raise PluginError(
                f"plug-in {name!r} returned a schedule of workflow {result.workflow!r}, "
                f"expected {workflow.id!r}"
            )
        result = result.starts
    if not isinstance(result, Mapping):
        raise PluginError(
            f"plug-in {name!r} returned {type(result).__name__}, expected a Schedule "
            "or a mapping of task id to start time"
        )
    starts: dict[str, float] = {}
    for task, value in result.items():
        if not isinstance(task, str) or task not in workflow.index:
            raise PluginError(f"plug-in {name!r} returned a start for unknown task {task!r}")
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise PluginError(f"plug-in {name!r} returned start {value!r} for task {task!r}, not a number")
        starts[task] = float(value)
    missing = [t.id for t in workflow.tasks if t.id not in starts]
    if missing:
        listed = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise PluginError(f"plug-in {name!r} returned no start for {len(missing)} task(s): {listed}")
    return starts


def built_policy(name: str, factory: Callable[..., Any], workflow: Workflow, machine: Machine | None) -> Any:
    """The policy a plug-in's policy factory builds for ``workflow`` on ``machine``, checked to be callable.

    Used for ``score --execute module:function`` and a plug-in heuristic's ``online`` form
    (``run --policy``); what the policy then answers is the simulator's or the controller's to check.

    Raises
    ------
    PluginError
        Naming the plug-in, when the factory raises (a callable that is not a factory of
        ``(workflow, machine)`` raises a TypeError) or returns something that is not callable.
    """
    try:
        policy = factory(workflow, machine)
    except Exception as exc:
        raise PluginError(
            f"plug-in {name!r}: its policy factory raised {_describe(exc)} (a policy factory takes "
            "(workflow, machine) and returns a policy (now, ready, running, free) -> steps to start)"
        ) from exc
    if not callable(policy):
        shown = "None" if policy is None else f"{type(policy).__name__} {_short(policy)}"
        raise PluginError(
            f"plug-in {name!r}: its policy factory returned {shown}, not a policy "
            "(a callable (now, ready, running, free) -> steps to start)"
        )
    return policy


def _short(value: object) -> str:
    """``repr(value)`` on one line, cut at 60 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(exc: BaseException) -> str:
    """``Type: message`` on one line (an ``Error:`` line must not wrap)."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def installed() -> dict[str, EntryPoint]:
    """The heuristics installed packages register under :data:`GROUP`, by name."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def load_plugin(spec: str) -> Plugin:
    """Load ``module:function`` (the function may be dotted) or an installed entry point.

    Raises
    ------
    PluginError
        When the module cannot be imported, the attribute is missing or not
        callable, or no entry point has that name.
    """
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        func = _resolve(spec, module_name, attr)
        return Plugin(spec, func, plugin_code(module_name, func))
    point = installed().get(spec)
    if point is None:
        raise PluginError(f"plug-in {spec!r}: no entry point of that name in group {GROUP!r}")
    try:
        func = point.load()
    except Exception as exc:
        raise PluginError(f"plug-in {spec!r}: cannot load {point.value} ({_describe(exc)})") from exc
    if not callable(func):
        raise PluginError(f"plug-in {spec!r}: {point.value} is not callable")
    return Plugin(spec, func, plugin_code(point.module, func))


def _resolve(spec: str, module_name: str, attr: str) -> Callable[..., Any]:
    if not module_name or not attr:
        raise PluginError(f"plug-in {spec!r}: expected module:function")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise PluginError(
            f"plug-in {spec!r}: cannot import module {module_name!r} ({_describe(exc)})"
        ) from exc
    for part in attr.split("."):
        if not hasattr(target, part):
            raise PluginError(f"plug-in {spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise PluginError(f"plug-in {spec!r}: {attr!r} is not callable")
    return target  # type: ignore[no-any-return]
