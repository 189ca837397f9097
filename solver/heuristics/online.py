"""Online forms of the heuristics: each decides at run time from what has finished.

:func:`online_policy` maps a method name (the grammar of :mod:`.methods`) to an
:class:`~peakopt.oracle.uncertain.online.OnlinePolicy` for the simulator
(:mod:`peakopt.oracle.uncertain.simulate`) or a runtime's admission controller:

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
:data:`~peakopt.oracle.uncertain.online.PolicyFactory` to build one per simulated run. The
policies themselves live in the oracle (:mod:`peakopt.oracle.uncertain.policies`); this module
maps the method names to them.
"""

from __future__ import annotations

import random
from typing import cast

from peakopt.models import Machine, Workflow
from peakopt.oracle.uncertain.online import OnlinePolicy, PolicyFactory
from peakopt.oracle.uncertain.policies import Admission, Positional, Slots, StartAll, order_policy
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.heuristics.errors import MachineNeeded, PluginError
from peakopt.solver.heuristics.methods import parse_method
from peakopt.solver.heuristics.plugins import built_policy
from peakopt.solver.heuristics.rules import rule_keys

#: The attribute by which a plug-in heuristic declares its online form (a ``PolicyFactory``).
ONLINE_ATTRIBUTE = "online"


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
            return cast(OnlinePolicy, built_policy(method_name, factory, workflow, machine))
    elif method.resource_aware and machine is None:
        raise MachineNeeded(f"method {method_name!r} is resource-aware and needs a machine")
    if head == "asap":
        return StartAll(workflow, machine)
    if head == "serial":
        return Slots(workflow, machine, 1, first=True)
    if head == "cap":
        return Slots(workflow, machine, int(rest))
    if head == "admission":
        return Admission(workflow, machine, strict=rest == "strict")
    rule = _parallel_rule(method_name)
    if rule is not None:
        problem = compile_problem(workflow, machine)
        return Admission(workflow, machine, keys=rule_keys(problem, rule, random.Random(seed)))
    return order_policy(workflow, machine, method.schedule(workflow, machine, seed=seed))


def policy_factory(method_name: str, *, seed: int = 0) -> PolicyFactory:
    """The :data:`~peakopt.oracle.uncertain.online.PolicyFactory` of :func:`online_policy` for one method.

    A built-in's policy for the last workflow × machine is built once (an offline planner plans
    once) and handed out fresh (:meth:`~peakopt.oracle.uncertain.policies.Positional.fresh`) for every
    run; a plug-in's factory is called for every run.
    """
    parse_method(method_name)  # a bad name fails here, not in the first run
    last: list[tuple[Workflow, Machine | None, OnlinePolicy]] = []

    def build(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
        if last and last[0][0] is workflow and last[0][1] is machine:
            template = last[0][2]
            return template.fresh() if isinstance(template, Positional) else template
        policy = online_policy(method_name, workflow, machine, seed=seed)
        if isinstance(policy, Positional):
            last[:] = [(workflow, machine, policy)]
            return policy.fresh()
        return policy

    return build
