"""Online forms of the heuristics: each decides at run time from what has finished.

:func:`online_policy` maps a method name (the grammar of :mod:`.methods`) to an
:class:`~peakopt.oracle.online.OnlinePolicy` for the simulator (:mod:`peakopt.oracle.simulate`)
or a runtime's admission controller:

==============================  =============================================================
method                          online form
==============================  =============================================================
``asap``                        every ready step at once
``serial``                      one step at a time, the ready one first in workflow order
``cap:K``                       ready steps in ready order while fewer than K run
``admission[:strict]``          the semaphores of :func:`.runtime.semaphores`: ready order,
                                clamped peak demands held for the whole run
``sgs:parallel:RULE``           the rule's priorities dispatched when the peaks fit
offline planners (serial SGS,   the nominal plan's order (the simulator's ``order``
sampling, best-rule, fbi,       execution of the method's own schedule)
best)
plug-in                         its ``online`` attribute (a ``PolicyFactory``), else the order
                                of its nominal plan
==============================  =============================================================

Each call builds a fresh policy from nominal data only; :func:`policy_factory` gives the
:data:`~peakopt.oracle.online.PolicyFactory` to build one per simulated run.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from peakopt.models import Machine, Workflow
from peakopt.oracle.dispatch import Need, admit
from peakopt.oracle.online import OnlinePolicy, PolicyFactory
from peakopt.oracle.policies import order_policy
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.heuristics.errors import MachineNeeded, PluginError
from peakopt.solver.heuristics.methods import parse_method
from peakopt.solver.heuristics.rules import rule_keys

#: The attribute by which a plug-in heuristic declares its online form (a ``PolicyFactory``).
ONLINE_ATTRIBUTE = "online"


def start_all(
    now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
) -> Iterable[str]:
    """``asap`` online: every ready step now, resources ignored."""
    return ready


class Slots:
    """At most ``limit`` steps running (``serial`` is one; ties to the first in workflow order)."""

    def __init__(self, limit: int, position: Mapping[str, int] | None = None) -> None:
        self.limit, self.position = limit, position

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """The first ready steps that keep at most ``limit`` running."""
        room = self.limit - len(running)
        if room <= 0:
            return ()
        if self.position is not None:  # serial: the topological order's tie rule, not ready order
            return sorted(ready, key=self.position.__getitem__)[:room]
        return ready[:room]


class Admission:
    """Ready steps in priority order (default: ready order), each when its clamped peak fits."""

    def __init__(
        self,
        workflow: Workflow,
        machine: Machine | None,
        *,
        strict: bool = False,
        keys: Sequence[float] | None = None,
    ) -> None:
        problem = compile_problem(workflow, machine)
        self.resources, self.strict = problem.resources, strict
        self.index, self.ids = workflow.index, problem.ids
        self.needs: Sequence[tuple[Need, ...]] = problem.peak
        self.keys = keys

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """The ready steps that fit, scanned in priority order (see :func:`peakopt.oracle.dispatch.admit`)."""
        queue = [self.index[step] for step in ready]
        if self.keys is not None:
            keys = self.keys
            queue.sort(key=lambda j: (keys[j], j))
        started = admit(queue, self.needs, [free[r] for r in self.resources], strict=self.strict)
        return [self.ids[j] for j in started]


def _parallel_rule(name: str) -> str | None:
    head, _, rest = name.partition(":")
    scheme, _, rule = rest.partition(":")
    return rule if head == "sgs" and scheme == "parallel" else None


def online_policy(
    method_name: str, workflow: Workflow, machine: Machine | None, *, seed: int = 0
) -> OnlinePolicy:
    """A fresh online form of ``method_name`` for ``workflow`` on ``machine`` (see the module table).

    Parameters
    ----------
    method_name
        A method of the grammar in :mod:`peakopt.solver.heuristics.methods`.
    workflow, machine
        The nominal instance the policy decides from.
    seed
        For seeded methods (the ``random`` rule, sampling, plug-ins).

    Raises
    ------
    MethodError, MachineNeeded, PluginError
        As :func:`~peakopt.solver.heuristics.methods.parse_method` and running the method do.
    """
    method = parse_method(method_name)
    head, _, rest = method_name.partition(":")
    if method.plugin is not None:
        factory = getattr(method.plugin.func, ONLINE_ATTRIBUTE, None)
        if factory is not None:
            if not callable(factory):
                raise PluginError(
                    f"plug-in {method_name!r}: its {ONLINE_ATTRIBUTE!r} is not a policy factory"
                )
            return factory(workflow, machine)  # type: ignore[no-any-return]
    elif method.resource_aware and machine is None:
        raise MachineNeeded(f"method {method_name!r} is resource-aware and needs a machine")
    if head == "asap":
        return start_all
    if head == "serial":
        return Slots(1, workflow.index)
    if head == "cap":
        return Slots(int(rest))
    if head == "admission":
        return Admission(workflow, machine, strict=rest == "strict")
    rule = _parallel_rule(method_name)
    if rule is not None:
        problem = compile_problem(workflow, machine)
        return Admission(workflow, machine, keys=rule_keys(problem, rule, random.Random(seed)))
    return order_policy(workflow, machine, method.schedule(workflow, machine, seed=seed))


def policy_factory(method_name: str, *, seed: int = 0) -> PolicyFactory:
    """The :data:`~peakopt.oracle.online.PolicyFactory` of :func:`online_policy` for one method."""
    parse_method(method_name)  # a bad name fails here, not in the first run

    def build(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
        return online_policy(method_name, workflow, machine, seed=seed)

    return build
