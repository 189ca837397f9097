"""Logical-planning metrics (PeakBench's Dimension I): a predicted dependency graph against the truth.

Both graphs live on the truth's steps plus any step the prediction invents
(a *hallucinated* step). Metrics:

- precision / recall / F1 on the raw edges, on the transitive closures (the
  order each graph implies) and on the transitive reductions (the edges
  that are not implied by others);
- graph edit distance with unit costs and ids matched. With ids matched no
  node mapping has to be searched, so it is computed directly from set
  differences: |hallucinated steps| + |raw edges in one graph only|;
  normalised by |V| + |E| of the truth;
- concurrent-pair F1 (PeakBench Eq. 3): on the unordered pairs of truth
  steps, a pair is concurrent when its graph's closure orders neither way;
- exact match: the same edges and no invented step; order match: the same
  closure, i.e. the prediction orders the steps exactly as the truth does.
  A step the prediction invents without an edge orders nothing: it leaves the
  order match as it is and is reported among the hallucinated steps (one
  with an edge changes the closure, so the order).

A cyclic prediction is reported with one of its cycles; its closure and
concurrency metrics are still defined (steps on a cycle are ordered both
ways), its transitive reduction is not (None).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from peakopt.models import Edge, Workflow
from peakopt.models.extras import LazyModule
from peakopt.oracle.answers.structure import Structure

if TYPE_CHECKING:
    import networkx as nx
else:
    # networkx on first use (a third of a second): a command's --help imports this module
    nx = LazyModule("networkx", "the oracle")


class PRF(BaseModel):
    """Precision, recall and F1 of a predicted set against a true set.

    Conventions for empty sets: precision is 1 when nothing is predicted
    (no false claim), recall is 1 when nothing is true, and F1 is their
    harmonic mean (0 when either is 0).
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    precision: float
    recall: float
    f1: float

    @classmethod
    def of(cls, predicted: Collection[object], truth: Collection[object]) -> PRF:
        """Compare two sets."""
        hits = len(set(predicted) & set(truth))
        precision = hits / len(predicted) if predicted else 1.0
        recall = hits / len(truth) if truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return cls(precision=precision, recall=recall, f1=f1)


class PlanScore(BaseModel):
    """Planning metrics of one prediction (see the module docstring).

    Attributes
    ----------
    edges, closure, reduction
        Precision/recall/F1 on raw edges, closures, reductions (None if cyclic).
    ged, ged_normalised
        Unit-cost graph edit distance, and divided by |V| + |E| of the truth.
    concurrency
        Precision/recall/F1 on the concurrent pairs of truth steps.
    exact_match, order_match
        Same raw edges and no invented step; same closure (see the module docstring).
    cyclic, cycle
        Whether the prediction has a cycle, and one cycle as a closed path.
    hallucinated, unmentioned
        Steps the prediction invents; truth steps it never mentions.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    edges: PRF
    closure: PRF
    reduction: PRF | None
    ged: int
    ged_normalised: float
    concurrency: PRF
    exact_match: bool
    order_match: bool
    cyclic: bool
    cycle: list[str] | None = None
    hallucinated: list[str] = Field(default_factory=list)
    unmentioned: list[str] = Field(default_factory=list)


def _graph(nodes: Iterable[str], edges: Iterable[Edge]) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(nodes))  # sorted: the cycle reported does not depend on set order
    graph.add_edges_from(sorted(edges))
    return graph


def closure(graph: nx.DiGraph) -> set[Edge]:
    """Edges of the transitive closure, without self-loops (cycles order their steps both ways)."""
    return {(a, b) for a, b in nx.transitive_closure(graph, reflexive=None).edges() if a != b}


def reduction(graph: nx.DiGraph) -> set[Edge] | None:
    """Edges of the transitive reduction; None when the graph has a cycle."""
    if not nx.is_directed_acyclic_graph(graph):
        return None
    return set(nx.transitive_reduction(graph).edges())


def concurrent_pairs(steps: Collection[str], ordered: set[Edge]) -> set[frozenset[str]]:
    """Unordered pairs of ``steps`` that no edge of ``ordered`` (a closure) orders either way."""
    return {
        frozenset(pair)
        for pair in itertools.combinations(sorted(steps), 2)
        if pair not in ordered and pair[::-1] not in ordered
    }


def find_cycle(graph: nx.DiGraph) -> list[str] | None:
    """One cycle as a closed path ``[a, b, ..., a]`` from its smallest id, or None."""
    try:
        cycle = [str(edge[0]) for edge in nx.find_cycle(graph)]
    except nx.NetworkXNoCycle:
        return None
    first = cycle.index(min(cycle))
    cycle = cycle[first:] + cycle[:first]
    return [*cycle, cycle[0]]


def plan_score(truth: Workflow, predicted: Structure) -> PlanScore:
    """Score a predicted dependency structure against ``truth``.

    Parameters
    ----------
    truth
        The workflow; its ``depends_on`` lists are the true edges.
    predicted
        The predicted steps and edges.

    Returns
    -------
    PlanScore
    """
    true_nodes = set(truth.index)
    true_edges = set(truth.edges)
    invented = sorted(predicted.nodes - true_nodes)
    graph = _graph(true_nodes | predicted.nodes, predicted.edges)
    true_graph = _graph(true_nodes, true_edges)
    true_closure, predicted_closure = closure(true_graph), closure(graph)
    predicted_reduction = reduction(graph)
    ged = len(invented) + len(set(predicted.edges) ^ true_edges)
    cycle = find_cycle(graph)
    return PlanScore(
        edges=PRF.of(predicted.edges, true_edges),
        closure=PRF.of(predicted_closure, true_closure),
        reduction=None
        if predicted_reduction is None
        else PRF.of(predicted_reduction, reduction(true_graph) or set()),
        ged=ged,
        ged_normalised=ged / (len(true_nodes) + len(true_edges)),
        concurrency=PRF.of(
            concurrent_pairs(true_nodes, predicted_closure), concurrent_pairs(true_nodes, true_closure)
        ),
        exact_match=not invented and set(predicted.edges) == true_edges,
        order_match=predicted_closure == true_closure,
        cyclic=cycle is not None,
        cycle=cycle,
        hallucinated=invented,
        unmentioned=sorted(true_nodes - predicted.nodes),
    )
