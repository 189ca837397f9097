"""Which part of a suite a task runs on: machines, tiers, seeded shuffle, limit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from peakopt.evals.suites import Selection, load_suite, name_list


def test_names_come_as_a_list_or_comma_separated() -> None:
    assert name_list(None) is None
    assert name_list("small, large") == ["small", "large"]
    assert name_list(["small", "large"]) == ["small", "large"]
    assert name_list(" , ") is None


def test_machines_and_tiers_narrow_the_pairs_in_the_suites_order() -> None:
    suite = load_suite("bundled:default")
    pairs = Selection(machines=["large", "small"], tiers=["hard"]).pairs(suite)
    assert len(pairs) == 2 * sum(w.meta["tier"] == "hard" for w in suite.workflows)
    assert {w.meta["tier"] for w, _ in pairs} == {"hard"}
    assert [m.name for _, m in pairs[:2]] == ["large", "small"]


def test_unknown_machines_and_tiers_are_named() -> None:
    suite = load_suite("bundled:default")
    with pytest.raises(ValueError, match="no machine huge; known: small, medium, large"):
        Selection(machines=["huge"]).pairs(suite)
    with pytest.raises(ValueError, match="no workflow of tier extreme; known: easy, hard, medium"):
        Selection(tiers=["extreme"]).pairs(suite)
    with pytest.raises(ValueError, match="-T limit: must be at least 0"):
        Selection(limit=-1).order([1])


@given(seed=st.integers(0, 2**32), limit=st.integers(0, 30), size=st.integers(0, 30))
def test_a_seeded_shuffle_is_reproducible_and_the_limit_takes_its_first_items(
    seed: int, limit: int, size: int
) -> None:
    items = list(range(size))
    chosen = Selection(seed=seed, limit=limit).order(items)
    assert chosen == Selection(seed=seed, limit=limit).order(items)
    assert chosen == Selection(seed=seed).order(items)[:limit]
    assert len(set(chosen)) == len(chosen) == min(limit, size)
    assert Selection(limit=limit).order(items) == items[:limit]  # no seed: the suite's order
