"""The heaviest antichain of a partial order: Dilworth's theorem as a minimum cut.

In a partial order given by a DAG, an *antichain* is a set of pairwise unordered elements.
Its maximum weight equals the minimum flow that covers every element by its weight along
chains (Dilworth's theorem, weighted). That minimum flow is the total weight minus a maximum
flow in a network of linear size: every element ``i`` becomes two nodes ``out_i`` and
``in_i``; the source feeds ``out_i`` with ``w_i``, ``in_i`` drains ``w_i`` to the sink, each
edge ``i -> j`` of the DAG is an uncapacitated arc ``out_i -> in_j``, and ``in_j -> out_j`` is
uncapacitated too, so flow may pass through ``j`` on to its successors (one unit of flow from
``out_i`` to ``in_k`` pairs ``i`` with any ``k`` it precedes, transitively). A minimum cut's
source side then holds ``out_i`` but not ``in_i`` exactly for the elements of a heaviest
antichain: two elements of it cannot be ordered, for the uncapacitated arcs would carry the
source side from the first to the second's ``in`` node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from peakopt.models.extras import LazyModule

if TYPE_CHECKING:
    import networkx as nx
else:
    # networkx on first use (a third of a second): a command's --help imports this module
    nx = LazyModule("networkx", "the oracle")


def heaviest_antichain(preds: Sequence[Sequence[int]], weight: Sequence[int]) -> list[int]:
    """A maximum-weight antichain of the order that ``preds`` spans, as element positions.

    Parameters
    ----------
    preds
        Per element, its direct predecessors (a DAG; the order is its transitive closure).
    weight
        Per element, a non-negative integer weight; elements of weight 0 are left out.

    Returns
    -------
    list of int
        Pairwise unordered elements of positive weight with the largest total, ascending.
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(("source", "sink"))
    for j, before in enumerate(preds):
        graph.add_edge(("in", j), ("out", j))  # no capacity: networkx takes it as unbounded
        for i in before:
            graph.add_edge(("out", i), ("in", j))
        if weight[j] > 0:
            graph.add_edge("source", ("out", j), capacity=weight[j])
            graph.add_edge(("in", j), "sink", capacity=weight[j])
    _, (side, _) = nx.minimum_cut(graph, "source", "sink")
    return [j for j, w in enumerate(weight) if w > 0 and ("out", j) in side and ("in", j) not in side]
