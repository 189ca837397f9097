"""Dependency shapes seen in agent workflows, as predecessor lists.

A shape of ``n`` calls is a list of ``n`` predecessor lists in topological
order: ``preds[i]`` holds indices below ``i``. Every shape is layered: calls
in a layer depend only on calls of the layer before.

- ``chain``: each call needs the previous one's output.
- ``parallel``: independent calls (the agent combines the answers itself).
- ``gather``: parallel calls, then one call aggregates them all.
- ``fanout``: one call, then parallel calls on its results.
- ``diamond``: one call fans out to parallel calls, one call joins them.
- ``layered``: several layers; each call needs one to three calls of the
  layer before, and every call feeds the next layer (fan-out/fan-in).
"""

from __future__ import annotations

from collections.abc import Callable

from peakopt.instances.draws import Draws

SHAPES = ("chain", "parallel", "gather", "fanout", "diamond", "layered")

#: The fewest calls each shape needs.
MIN_CALLS = {"chain": 1, "parallel": 1, "gather": 2, "fanout": 2, "diamond": 3, "layered": 3}

#: Most predecessors a call of a ``layered`` shape draws from the layer before.
MAX_FAN_IN = 3


def full(layers: list[int]) -> list[list[int]]:
    """Layers of the given sizes, each call depending on every call of the layer before."""
    preds: list[list[int]] = []
    previous: list[int] = []
    for size in layers:
        current = list(range(len(preds), len(preds) + size))
        preds.extend(list(previous) for _ in current)
        previous = current
    return preds


def sparse(layers: list[int], draws: Draws) -> list[list[int]]:
    """Layers where each call needs 1..:data:`MAX_FAN_IN` random calls of the layer before.

    Every call of a layer but the last feeds at least one call of the next,
    so no intermediate result is dropped.
    """
    preds: list[list[int]] = []
    previous: list[int] = []
    for size in layers:
        current = list(range(len(preds), len(preds) + size))
        if not previous:
            preds.extend([] for _ in current)
            previous = current
            continue
        chosen = [
            sorted(draws.sample(previous, draws.integer(1, min(MAX_FAN_IN, len(previous))))) for _ in current
        ]
        fed = {p for c in chosen for p in c}
        for orphan in (p for p in previous if p not in fed):
            target = chosen[draws.integer(0, size - 1)]
            target.append(orphan)
            target.sort()
        preds.extend(chosen)
        previous = current
    return preds


def layer_sizes(shape: str, calls: int, draws: Draws) -> list[int]:
    """How many calls each layer of ``shape`` holds."""
    if shape == "chain":
        return [1] * calls
    if shape == "parallel":
        return [calls]
    if shape == "gather":
        return [calls - 1, 1]
    if shape == "fanout":
        return [1, calls - 1]
    if shape == "diamond":
        return [1, calls - 2, 1]
    depth = draws.integer(3, max(3, calls // 3))
    return draws.partition(calls, depth)


def draw_shape(shape: str, calls: int, draws: Draws) -> list[list[int]]:
    """Predecessor lists of a ``shape`` of ``calls`` calls.

    Raises
    ------
    ValueError
        On an unknown shape or too few calls for it.
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; known: {', '.join(SHAPES)}")
    if calls < MIN_CALLS[shape]:
        raise ValueError(f"shape {shape!r} needs at least {MIN_CALLS[shape]} calls, got {calls}")
    sizes = layer_sizes(shape, calls, draws)
    maker: Callable[[list[int]], list[list[int]]] = (
        (lambda s: sparse(s, draws)) if shape == "layered" else full
    )
    return maker(sizes)
