"""Seeded draws and the dependency shapes of generated workflows."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.instances.draws import Z_LIMIT, Draws
from peakopt.instances.shapes import MIN_CALLS, SHAPES, draw_shape, full, sparse


def test_draws_repeat_with_the_seed_and_differ_across_seeds() -> None:
    def stream(seed: int) -> list[float]:
        d = Draws(seed)
        return [d.random(), d.normal(), float(d.integer(1, 6)), d.uniform(2, 3)]

    assert stream(7) == stream(7)
    assert stream(7) != stream(8)


@given(st.integers(0, 2**32), st.integers(-5, 5), st.integers(0, 20))
def test_draws_stay_in_their_ranges(seed: int, low: int, span: int) -> None:
    d = Draws(seed)
    assert low <= d.integer(low, low + span) <= low + span
    assert -Z_LIMIT <= d.normal() <= Z_LIMIT
    items = list(range(span + 3))
    picked = d.sample(items, min(3, len(items)))
    assert len(set(picked)) == len(picked) and set(picked) <= set(items)
    assert sorted(d.shuffle(items)) == items
    parts = d.partition(span + 3, 3)
    assert sum(parts) == span + 3 and all(p >= 1 for p in parts)


def test_weighted_choice_follows_the_weights() -> None:
    d = Draws(1)
    picks = [d.choice("ab", [1, 3]) for _ in range(4000)]
    assert math.isclose(picks.count("b") / 4000, 0.75, abs_tol=0.03)
    assert d.choice("ab", [0, 1]) == "b"


def test_fixed_shapes() -> None:
    d = Draws(0)
    assert draw_shape("chain", 3, d) == [[], [0], [1]]
    assert draw_shape("parallel", 3, d) == [[], [], []]
    assert draw_shape("gather", 4, d) == [[], [], [], [0, 1, 2]]
    assert draw_shape("fanout", 3, d) == [[], [0], [0]]
    assert draw_shape("diamond", 4, d) == [[], [0], [0], [1, 2]]
    assert full([2, 2]) == [[], [], [0, 1], [0, 1]]


def test_shape_errors() -> None:
    with pytest.raises(ValueError, match="unknown shape"):
        draw_shape("star", 3, Draws(0))
    with pytest.raises(ValueError, match="needs at least 3 calls"):
        draw_shape("diamond", 2, Draws(0))


@given(st.integers(0, 10_000), st.lists(st.integers(1, 6), min_size=1, max_size=6))
def test_sparse_layers_link_consecutive_layers_only(seed: int, sizes: list[int]) -> None:
    preds = sparse(sizes, Draws(seed))
    layer = [i for i, size in enumerate(sizes) for _ in range(size)]
    assert len(preds) == sum(sizes)
    fed: set[int] = set()
    for i, before in enumerate(preds):
        if layer[i] == 0:
            assert before == []
        else:
            assert before and all(layer[p] == layer[i] - 1 for p in before)
            assert before == sorted(set(before))
        fed.update(before)
    # every call but the last layer's feeds the next layer
    assert {i for i in range(len(preds)) if layer[i] < len(sizes) - 1} <= fed


@given(st.integers(0, 10_000), st.sampled_from(SHAPES), st.integers(1, 15))
def test_every_shape_is_a_topological_dag(seed: int, shape: str, calls: int) -> None:
    if calls < MIN_CALLS[shape]:
        return
    preds = draw_shape(shape, calls, Draws(seed))
    assert len(preds) == calls
    assert all(p < i for i, before in enumerate(preds) for p in before)
