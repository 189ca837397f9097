"""Large workflows for scale tests: layered agent DAGs and random RCPSP instances.

Two kinds, each returned as a suite of one workflow and one machine:

- ``layered``: ``tasks`` tool calls in layers of about ``width`` calls (each
  layer's size uniform in [width/2, 3·width/2]); each call depends on one to
  three calls of the layer before, and every call feeds the next layer.
  Profiles are drawn from the tool catalog (constant, CPU and memory); with
  ``resources`` K > 2, resources ``R3`` … ``RK`` are added, each used by a
  call with probability 1/2 at an integer demand in 1..10; K = 1 keeps CPU
  only.
- ``rcpsp``: a PSPLIB-like instance: integer durations 1..10, resources
  ``R1`` … ``RK``, each used by a task with probability ``factor`` (the
  resource factor; at least one per task) at a demand in 1..10. Network
  complexity ``complexity`` is the number of precedence edges per task
  (ProGen's arcs per node, without the dummy source and sink; redundant arcs
  are not removed). Predecessors are drawn among the ``width`` tasks before
  in a random topological order, which bounds the available parallelism.

The machine follows Kolisch's resource strength: per resource,
``capacity = r_min + strength · (r_max − r_min)``, where ``r_min`` is the
largest single demand and ``r_max`` the peak load of the earliest-start
(ASAP, resource-blind) schedule. Strength 0 is the tightest machine that
runs every task on its own, 1 a machine that never delays ASAP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from peakopt.instances.calls import draw_call
from peakopt.instances.catalog import Catalog, default_catalog
from peakopt.instances.draws import Draws
from peakopt.instances.machines import round_up, soft_resources
from peakopt.instances.names import KINDS
from peakopt.instances.shapes import sparse
from peakopt.models import Machine, Suite, Task, Workflow

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class LargeSpec:
    """What a large instance looks like.

    Parameters
    ----------
    kind
        ``layered`` or ``rcpsp``.
    tasks
        Number of tasks (at least 1).
    width
        Calls per layer (layered) or predecessor window (rcpsp); by default
        about the square root of ``tasks`` (at least 2).
    resources
        Number of resources K (at least 1); default 2 (layered) or 4 (rcpsp).
    strength
        Kolisch's resource strength of the machine, in [0, 1].
    complexity
        rcpsp: precedence edges per task.
    factor
        rcpsp: probability that a task uses a resource.
    seed
        Seed of the random stream.
    """

    kind: str = "layered"
    tasks: int = 1000
    width: int | None = None
    resources: int | None = None
    strength: float = 0.5
    complexity: float = 1.8
    factor: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        checks = (
            (self.kind in KINDS, f"kind must be one of {KINDS}, got {self.kind!r}"),
            (self.tasks >= 1, f"tasks must be >= 1, got {self.tasks}"),
            (self.width is None or self.width >= 1, f"width must be >= 1, got {self.width}"),
            (self.resources is None or self.resources >= 1, f"resources must be >= 1, got {self.resources}"),
            (0 <= self.strength <= 1, f"strength must be in [0, 1], got {self.strength}"),
            (self.complexity >= 0, f"complexity must be >= 0, got {self.complexity}"),
            (0 < self.factor <= 1, f"factor must be in (0, 1], got {self.factor}"),
        )
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    @property
    def span(self) -> int:
        """The width, or its default."""
        return self.width or max(2, round(math.sqrt(self.tasks)))

    @property
    def resource_count(self) -> int:
        """The number of resources, or its default."""
        return self.resources or (2 if self.kind == "layered" else 4)

    @property
    def name(self) -> str:
        """Workflow id, e.g. ``layered-n1000-s0``."""
        return f"{self.kind}-n{self.tasks}-s{self.seed}"


def layered(spec: LargeSpec, catalog: Catalog | None = None) -> Workflow:
    """A layered DAG of tool calls with catalog profiles."""
    catalog = catalog or default_catalog()
    draws = Draws(spec.seed)
    sizes: list[int] = []
    low, high = max(1, spec.span // 2), max(1, spec.span + spec.span // 2)
    while sum(sizes) < spec.tasks:
        sizes.append(min(draws.integer(low, high), spec.tasks - sum(sizes)))
    preds = sparse(sizes, draws)
    tasks = []
    for index, before in enumerate(preds):
        archetype = draws.choice(catalog.archetypes)
        fields = draw_call(archetype, draws)
        fields["demand"] = _resources(fields["demand"], spec.resource_count, draws)
        tasks.append(
            Task(
                id=f"t{index}",
                tool=archetype.name,
                server=archetype.server,
                depends_on=tuple(f"t{p}" for p in before),
                **fields,
            )
        )
    return Workflow(id=spec.name, tasks=tuple(tasks), meta={"kind": "layered", "layers": len(sizes)})


def _resources(demand: dict[str, float], count: int, draws: Draws) -> dict[str, float]:
    kept = dict(list(demand.items())[: min(count, 2)])
    for k in range(3, count + 1):
        if draws.chance(0.5):
            kept[f"R{k}"] = float(draws.integer(1, 10))
    return kept


def rcpsp(spec: LargeSpec) -> Workflow:
    """A random RCPSP instance with the spec's network complexity and resource factor."""
    draws = Draws(spec.seed)
    count, span = spec.tasks, spec.span
    possible = sum(min(j, span) for j in range(count))
    wanted = min(possible, round(spec.complexity * count))
    edges: set[tuple[int, int]] = set()
    while len(edges) < wanted:
        j = draws.integer(1, count - 1)
        edges.add((draws.integer(max(0, j - span), j - 1), j))
    preds: list[list[int]] = [[] for _ in range(count)]
    for i, j in sorted(edges):
        preds[j].append(i)
    names = [f"R{k}" for k in range(1, spec.resource_count + 1)]
    tasks = []
    for j in range(count):
        used = [r for r in names if draws.chance(spec.factor)] or [draws.choice(names)]
        demand = {r: float(draws.integer(1, 10)) for r in used}
        duration = float(draws.integer(1, 10))
        before = tuple(f"{i + 1}" for i in preds[j])
        tasks.append(Task(id=f"{j + 1}", depends_on=before, duration=duration, demand=demand))
    meta = {"kind": "rcpsp", "complexity": len(edges) / count, "factor": spec.factor}
    return Workflow(id=spec.name, tasks=tuple(tasks), meta=meta)


def earliest_starts(workflow: Workflow) -> np.ndarray:
    """Earliest start of each task (in task order) when resources are ignored."""
    import numpy as np  # here: ``peakopt validate`` reads this package and must not load NumPy

    return np.array(workflow.earliest_starts)


def asap_peak(workflow: Workflow, resource: str) -> float:
    """Peak load on ``resource`` of the earliest-start schedule (each task at its peak demand)."""
    import numpy as np

    start = earliest_starts(workflow)
    demand = np.array([t.peak(resource) for t in workflow.tasks])
    end = start + np.array([t.length for t in workflow.tasks])
    # float sums leave an end a hair after the start it meets (14.879999999999999 vs 14.88):
    # rounded, they meet, as the oracle's sweep sees them (it ignores stretches below its tolerance)
    times = np.round(np.concatenate([start, end]), 9)
    # ends sort before starts at equal times: [s, e) intervals that only touch do not overlap
    order = np.lexsort((np.concatenate([np.ones_like(start), np.zeros_like(end)]), times))
    steps = np.concatenate([demand, -demand])[order]
    return float(np.max(np.cumsum(steps), initial=0.0))


def strength_machine(workflow: Workflow, strength: float) -> Machine:
    """The machine of Kolisch resource strength ``strength`` for ``workflow``."""
    capacity: dict[str, float] = {}
    for resource in sorted(workflow.resources):
        peaks = [t.peak(resource) for t in workflow.tasks]
        r_min, r_max = max(peaks), asap_peak(workflow, resource)
        whole = all(float(p).is_integer() for p in peaks)
        capacity[resource] = max(round_up(r_min + strength * (r_max - r_min), whole), 0.01)
    meta: dict[str, Any] = {"resource_strength": strength}
    return Machine(name=f"rs-{strength:g}", capacity=capacity, soft=soft_resources(capacity), meta=meta)


def large_suite(spec: LargeSpec, catalog: Catalog | None = None) -> Suite:
    """A suite of one large workflow and its resource-strength machine."""
    workflow = layered(spec, catalog) if spec.kind == "layered" else rcpsp(spec)
    meta = {"synthetic": True, "large": dict(vars(spec))}
    return Suite(machines=(strength_machine(workflow, spec.strength),), workflows=(workflow,), meta=meta)
