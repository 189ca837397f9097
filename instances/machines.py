"""Machine profiles by PeakBench's rule, pooled over a suite.

For each resource, two pools of demands are formed over every workflow of
the suite:

- **step demands**: each task's peak demand on the resource (one value per
  task of the suite);
- **earliest-layer demands**: for each workflow, the sum of the peak demands
  of its *earliest layer* — the tasks with no predecessor, which an ASAP
  executor launches together at time 0 (one value per workflow). As a
  piecewise profile holds its peak in its first segment here (a start-up
  spike), this is also the peak load of the workflow at time 0 under ASAP.

A profile's capacity is the larger of a percentile of each pool (linear
interpolation, NumPy's default):

========  ============  ======================
profile   step pool     earliest-layer pool
========  ============  ======================
small     p95           p65
medium    p98           p80
large     p99           p95
========  ============  ======================

Capacities are rounded up: to whole units when every demand of the resource
is a whole number (memory in MB), else to 0.01 (CPU cores).

Which resources are soft (:attr:`~peakopt.models.Machine.soft`): CPU cores
(:data:`SOFT_RESOURCES`) — oversubscribed, the steps share them and run
slower; every other resource is hard — memory and GPU memory (overflow is an
OOM kill), connection slots and a provider's rate or concurrency limits (a
refused connection or a 429 is a failed call), PSPLIB's renewable resources.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from peakopt.models import Machine, Workflow

#: The resources peakopt's generated and bundled machines declare soft: CPU cores.
SOFT_RESOURCES = ("cpu",)

#: Profile name -> (step percentile, earliest-layer percentile).
PROFILE_RULE: dict[str, tuple[float, float]] = {"small": (95, 65), "medium": (98, 80), "large": (99, 95)}


def soft_resources(capacity: Iterable[str]) -> tuple[str, ...]:
    """The resources of ``capacity`` a generated machine declares soft (:data:`SOFT_RESOURCES`)."""
    return tuple(r for r in capacity if r in SOFT_RESOURCES)


def earliest_layer(workflow: Workflow) -> list[str]:
    """Ids of the tasks with no predecessor, in task order."""
    return [t.id for t in workflow.tasks if not t.depends_on]


def earliest_layer_demand(workflow: Workflow, resource: str) -> float:
    """Sum of the peak demands on ``resource`` of the workflow's earliest layer."""
    return math.fsum(workflow.task(i).peak(resource) for i in earliest_layer(workflow))


def step_demands(workflows: Iterable[Workflow], resource: str) -> list[float]:
    """Every task's peak demand on ``resource``."""
    return [t.peak(resource) for w in workflows for t in w.tasks]


def round_up(value: float, whole: bool) -> float:
    """``value`` rounded up to a whole number, or to 0.01."""
    scale = 1 if whole else 100
    # round first so that 1.2 (stored as 1.19999...) * 100 does not become 121
    return math.ceil(round(value * scale, 6)) / scale


def capacities(
    workflows: Sequence[Workflow], step: float, layer: float, resources: Iterable[str]
) -> dict[str, float]:
    """Per resource, max(step-pool percentile ``step``, earliest-layer percentile ``layer``)."""
    import numpy as np  # here: ``peakopt validate`` reads this package and must not load NumPy

    capacity = {}
    for resource in resources:
        steps = step_demands(workflows, resource)
        layers = [earliest_layer_demand(w, resource) for w in workflows]
        value = max(float(np.percentile(steps, step)), float(np.percentile(layers, layer)))
        whole = all(float(v).is_integer() for v in steps)
        capacity[resource] = max(round_up(value, whole), 0.01)
    return capacity


def machine_profiles(
    workflows: Sequence[Workflow], rule: Mapping[str, tuple[float, float]] = PROFILE_RULE
) -> tuple[Machine, ...]:
    """One machine per profile of ``rule``, for every resource the workflows use.

    Raises
    ------
    ValueError
        When there is no workflow.
    """
    if not workflows:
        raise ValueError("machine profiles need at least one workflow")
    resources = sorted(frozenset().union(*(w.resources for w in workflows)))
    machines = []
    for name, (step, layer) in rule.items():
        capacity = capacities(workflows, step, layer, resources)
        meta = {"rule": f"max(step p{step:g}, earliest-layer p{layer:g})"}
        machines.append(Machine(name=name, capacity=capacity, soft=soft_resources(capacity), meta=meta))
    return tuple(machines)
