"""The policies a controlled run can follow, by name.

- ``robust``: the order of the robust reference (:func:`peakopt.solver.robust.solve_robust`,
  the shortest partial-order schedule safe for any durations), run as the simulator's ``order``
  execution: steps start in the plan's order as they become ready and fit;
- ``optimal``: the same with the order of the optimum at nominal durations
  (:func:`peakopt.solver.solve`);
- any method name of :mod:`peakopt.solver.heuristics.methods` (``admission``, ``asap``,
  ``sgs:parallel:lft``, a plug-in...): its online form
  (:func:`peakopt.solver.heuristics.online.online_policy`).

Whatever the policy, the controller's guard admits a step only when it fits.
"""

from __future__ import annotations

from peakopt.models import Machine, Workflow
from peakopt.oracle.uncertain.online import OnlinePolicy
from peakopt.oracle.uncertain.policies import order_policy
from peakopt.runtime.controller import ControllerError
from peakopt.solver.heuristics import online_policy

#: The policies that solve a reference first (the others are method names).
PLANNED = ("robust", "optimal")


def named_policy(
    name: str, workflow: Workflow, machine: Machine, *, seed: int = 0, time_limit: float = 10.0
) -> OnlinePolicy:
    """A fresh policy ``name`` for a run of ``workflow`` on ``machine`` (see the module docstring).

    Raises
    ------
    MethodError
        For a name that is neither a planned policy nor a method.
    ControllerError
        When the reference of ``robust`` or ``optimal`` has no schedule within ``time_limit``.
    """
    if name not in PLANNED:
        return online_policy(name, workflow, machine, seed=seed)
    # imported here: `peakopt run --help` imports this module and must not pay for OR-Tools
    from peakopt.solver import solve, solve_robust

    reference = solve_robust if name == "robust" else solve
    result = reference(workflow, machine, time_limit=time_limit, seed=seed)
    if result.schedule is None:
        raise ControllerError(
            f"policy {name}: no reference schedule for {workflow.id!r} on {machine.name!r} "
            f"({result.status}{': ' + result.message if result.message else ''})"
        )
    return order_policy(workflow, machine, result.schedule)
