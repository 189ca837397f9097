"""PeakBench-like suites: tiered agent workflows drawn from the tool catalog.

A workflow is drawn in five steps: a tier fixes how many servers and calls
it has; a dependency shape is drawn for the tier
(:mod:`peakopt.instances.shapes`); a theme category and servers are picked
(:func:`pick_tools`); each call gets a tool of one of the servers (every
server is used at least once), lighter tools tending to the wider layers
(:func:`place`); each call's profile is drawn from its tool's archetype
(:mod:`peakopt.instances.calls`). The suite's machines then follow
PeakBench's rule (:mod:`peakopt.instances.machines`).

The suite is synthetic: built the way the PeakBench paper describes, not
PeakBench's own (unpublished) workflows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from peakopt.instances.calls import draw_call
from peakopt.instances.catalog import CATEGORIES, Archetype, Catalog, default_catalog
from peakopt.instances.draws import Draws
from peakopt.instances.machines import machine_profiles
from peakopt.instances.names import DEFAULT_COUNTS
from peakopt.instances.shapes import MIN_CALLS, draw_shape
from peakopt.instances.texts import call_text, request_text
from peakopt.models import Suite, Task, Workflow

#: Servers of a workflow's theme category are this many times as likely to be picked.
THEME_WEIGHT = 4.0
#: Spread of the random score added to a tool's heaviness when placing it.
PLACEMENT_JITTER = 2.0


@dataclass(frozen=True)
class Tier:
    """How big a workflow of a tier is, and which shapes it takes (with weights)."""

    name: str
    servers: tuple[int, int]
    calls: tuple[int, int]
    shapes: Mapping[str, float]


TIERS: dict[str, Tier] = {
    "easy": Tier("easy", (1, 2), (2, 4), {"chain": 0.1, "parallel": 0.45, "gather": 0.3, "fanout": 0.15}),
    "medium": Tier(
        "medium",
        (3, 5),
        (5, 8),
        {"chain": 0.05, "parallel": 0.1, "gather": 0.35, "diamond": 0.2, "layered": 0.3},
    ),
    "hard": Tier("hard", (6, 10), (10, 15), {"gather": 0.3, "diamond": 0.3, "layered": 0.4}),
}


@dataclass(frozen=True)
class SuiteSpec:
    """Everything that determines a generated suite.

    Parameters
    ----------
    seed
        Seed of the random stream.
    counts
        Number of workflows per tier, generated in tier order.
    piecewise
        Probability that a call whose archetype has a start-up spike gets a
        piecewise profile (0: every call is constant).
    noise
        Scale of the per-call input noise (0: every call at its archetype's
        median).
    varies
        Give each call the run-to-run spread of its duration
        (:func:`~peakopt.instances.calls.duration_varies`); draws nothing, so the nominal
        figures are the same either way.
    """

    seed: int = 0
    counts: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_COUNTS))
    piecewise: float = 0.0
    noise: float = 1.0
    varies: bool = True

    def __post_init__(self) -> None:
        unknown = set(self.counts) - set(TIERS)
        if unknown:
            raise ValueError(f"unknown tier {sorted(unknown)[0]!r}; known: {', '.join(TIERS)}")
        if any(c < 0 for c in self.counts.values()) or not any(self.counts.values()):
            raise ValueError("counts must be non-negative with at least one workflow")
        if not 0 <= self.piecewise <= 1:
            raise ValueError(f"piecewise must be a probability in [0, 1], got {self.piecewise}")
        if self.noise < 0:
            raise ValueError(f"noise must be >= 0, got {self.noise}")

    def describe(self) -> dict[str, Any]:
        """The spec as the suite's ``meta`` records it."""
        return {
            "seed": self.seed,
            "counts": {t: self.counts.get(t, 0) for t in TIERS},
            "piecewise": self.piecewise,
            "noise": self.noise,
            "varies": self.varies,
        }


def pick_tools(tier: Tier, calls: int, catalog: Catalog, draws: Draws) -> tuple[str, list[Archetype]]:
    """A theme category and ``calls`` archetypes covering the tier's number of servers.

    The first server is of the theme; the others are picked with servers of
    the theme :data:`THEME_WEIGHT` times as likely as the rest.
    """
    servers = list(catalog.servers)
    theme = draws.choice([c for c in CATEGORIES if any(catalog.server_category(s) == c for s in servers)])
    themed = [s for s in servers if catalog.server_category(s) == theme]
    chosen = [draws.choice(themed)]
    servers.remove(chosen[0])
    # a small custom catalog may hold fewer servers than the tier asks for
    count = min(draws.integer(tier.servers[0], min(tier.servers[1], calls)), len(servers) + 1)
    weights = [THEME_WEIGHT if catalog.server_category(s) == theme else 1.0 for s in servers]
    chosen += draws.sample(servers, count - 1, weights)
    tools = [draws.choice(catalog.tools(s)) for s in chosen]
    pool = [a for s in chosen for a in catalog.tools(s)]
    tools += [draws.choice(pool) for _ in range(calls - count)]
    return theme, tools


def heaviness(archetype: Archetype) -> float:
    """Log of the median call's memory × peak CPU.

    The duration is left out: long but light calls (network waits) fan out too.
    """
    return archetype.memory.mu + archetype.cpu_peak.mu


def place(tools: list[Archetype], preds: list[list[int]], draws: Draws) -> list[Archetype]:
    """Tools by position: lighter tools (with jitter) go to the wider layers.

    Agents fan out cheap lookups and run heavy processing on their results,
    so a call's weight and how many calls run beside it are anti-correlated;
    :data:`PLACEMENT_JITTER` keeps it a tendency, not a rule.
    """
    widths = layer_widths(preds)
    positions = sorted(range(len(preds)), key=lambda i: (-widths[i], draws.random()))
    keyed = sorted(tools, key=lambda a: heaviness(a) + PLACEMENT_JITTER * draws.normal())
    placed: list[Archetype] = list(tools)
    for position, archetype in zip(positions, keyed, strict=True):
        placed[position] = archetype
    return placed


def layer_widths(preds: list[list[int]]) -> list[int]:
    """For each call, how many calls share its depth (longest chain of predecessors)."""
    depth: list[int] = []
    for before in preds:
        depth.append(1 + max((depth[p] for p in before), default=-1))
    return [depth.count(d) for d in depth]


def task_ids(tools: list[Archetype]) -> list[str]:
    """Readable unique ids: the tool name, with ``_2``, ``_3``... on repeats."""
    seen: dict[str, int] = {}
    ids = []
    for archetype in tools:
        seen[archetype.tool] = seen.get(archetype.tool, 0) + 1
        count = seen[archetype.tool]
        ids.append(archetype.tool if count == 1 else f"{archetype.tool}_{count}")
    return ids


def draw_workflow(workflow_id: str, tier: Tier, spec: SuiteSpec, catalog: Catalog, draws: Draws) -> Workflow:
    """One workflow of ``tier``; ``meta`` records its tier, shape and theme.

    Its ``request`` and each task's ``call`` (whose arguments name exactly
    the task's predecessors) come from :mod:`peakopt.instances.texts`.
    """
    calls = draws.integer(*tier.calls)
    shapes = [s for s in tier.shapes if MIN_CALLS[s] <= calls]
    shape = draws.choice(shapes, [tier.shapes[s] for s in shapes])
    preds = draw_shape(shape, calls, draws)
    theme, picked = pick_tools(tier, calls, catalog, draws)
    tools = place(picked, preds, draws)
    ids = task_ids(tools)
    tasks = []
    for index, archetype in enumerate(tools):
        piecewise = archetype.startup is not None and draws.chance(spec.piecewise)
        profile = draw_call(archetype, draws, noise=spec.noise, piecewise=piecewise, varies=spec.varies)
        tasks.append(
            Task(
                id=ids[index],
                tool=archetype.name,
                server=archetype.server,
                call=call_text(archetype, [(tools[p], ids[p]) for p in preds[index]]),
                depends_on=tuple(ids[p] for p in preds[index]),
                **profile,
            )
        )
    meta = {"tier": tier.name, "shape": shape, "theme": theme}
    request = request_text(theme, tools, [i for i, before in enumerate(preds) if not before])
    return Workflow(id=workflow_id, request=request, tasks=tuple(tasks), meta=meta)


def generate_suite(spec: SuiteSpec | None = None, catalog: Catalog | None = None) -> Suite:
    """A synthetic PeakBench-like suite with small, medium and large machines.

    Parameters
    ----------
    spec
        Seed, tier counts, piecewise share and noise; the default suite's by
        default.
    catalog
        The tool catalog; the bundled one by default.

    Returns
    -------
    Suite
        Workflows ``easy-000``, ..., ``hard-049`` (``meta.tier`` holds the
        tier) and the three machines of PeakBench's rule, pooled over them.
    """
    spec = spec or SuiteSpec()
    catalog = catalog or default_catalog()
    draws = Draws(spec.seed)
    workflows = [
        draw_workflow(f"{name}-{i:03d}", TIERS[name], spec, catalog, draws)
        for name in TIERS
        for i in range(spec.counts.get(name, 0))
    ]
    meta = {
        "synthetic": True,
        "description": "Synthetic PeakBench-like suite generated by peakopt (not PeakBench's own data).",
        "generator": spec.describe(),
    }
    return Suite(machines=machine_profiles(workflows), workflows=tuple(workflows), meta=meta)


def redraw_workflow(
    workflow: Workflow, attempt: int, spec: SuiteSpec | None = None, catalog: Catalog | None = None
) -> Workflow:
    """Another workflow of ``workflow``'s tier under the same id, from a stream of its own.

    The stream is seeded by the suite's seed, the workflow's id and ``attempt`` (1, 2...), so a
    redraw is reproducible and leaves every other workflow of the suite as it was.
    """
    spec = spec or SuiteSpec()
    catalog = catalog or default_catalog()
    tier = TIERS[str(workflow.meta["tier"])]
    # a seed of its own: the suite's, the id's bytes and the attempt, one big integer
    seed = int.from_bytes(f"{spec.seed}/{workflow.id}/{attempt}".encode(), "big")
    return draw_workflow(workflow.id, tier, spec, catalog, Draws(seed))
