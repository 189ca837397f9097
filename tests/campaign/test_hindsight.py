"""The perfect-information bound: an optimum or a bound the oracle accepts, solved once and cached."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from solver_helpers import CHAIN, FIVE, LAYER_INSTANCES, MACHINE, PAIR, TRIPLE, tiny_instances

from peakopt.campaign import hindsight
from peakopt.campaign.executors import Where, open_executor
from peakopt.campaign.hindsight import (
    Bound,
    Job,
    MemoryCache,
    StoreBounds,
    bound_one,
    perfect_information,
    scenario_key,
)
from peakopt.campaign.store import Store
from peakopt.models import Machine, Workflow
from peakopt.oracle import evaluate
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.solver import solve
from peakopt.solver.quick import LAYERS


def assert_accepted(bound: Bound, workflow: Workflow, machine: Machine) -> None:
    """The oracle finds the bound's schedule valid and safe, with the bound's makespan above its bound."""
    assert bound.status in ("optimal", "feasible")
    assert bound.makespan is not None
    score = evaluate(workflow, machine, bound.schedule(workflow, machine))
    assert score.valid, score.reasons
    assert score.safe, score.avoidable_cva
    assert score.makespan == pytest.approx(bound.makespan, rel=1e-9, abs=1e-12)
    assert bound.lower_bound <= bound.makespan + 1e-9
    if bound.status == "optimal":
        assert bound.lower_bound == bound.makespan


@pytest.mark.parametrize("source", LAYERS)
def test_each_layer_settles_what_the_cheaper_ones_cannot(source: str) -> None:
    # the layers' results themselves: tests/solver/test_solver_quick.py; here the bound made of one
    workflow, machine, optimum = LAYER_INSTANCES[source]
    bound = bound_one(workflow, machine)
    assert (bound.source, bound.status) == (source, "optimal")
    assert bound.makespan == pytest.approx(optimum)
    assert_accepted(bound, workflow, machine)


@given(tiny_instances(max_tasks=5, halves=True))
def test_the_bound_agrees_with_cp_sat_and_the_oracle_accepts_it(instance: tuple[Workflow, Machine]) -> None:
    workflow, machine = instance
    bound = bound_one(workflow, machine, time_limit=5.0)
    assert_accepted(bound, workflow, machine)
    reference = solve(workflow, machine, time_limit=10.0, workers=1)
    assert reference.makespan is not None and reference.lower_bound is not None
    # neither beats the other's proven bound; both proven, they agree
    assert bound.lower_bound <= reference.makespan + 1e-9
    assert reference.lower_bound <= bound.makespan + 1e-9
    if bound.status == reference.status == "optimal":
        assert bound.makespan == pytest.approx(reference.makespan, rel=1e-9, abs=1e-12)


def test_an_unproven_bound_measures_gaps_against_its_lower_bound() -> None:
    proven = Bound("optimal", 10.0, 10.0, "shortcut", 1.0, 0.0)
    open_ = Bound("feasible", 10.0, 8.0, "cpsat", 1.0, 0.0)
    assert proven.gap(11.0) == pytest.approx(0.1)
    assert open_.gap(10.0) == pytest.approx(0.25)  # an upper bound on the true gap
    assert hindsight.failed_bound(1.0).gap(3.0) is None
    assert Bound("optimal", 0.0, 0.0, "shortcut", 1.0, 0.0).gap(0.0) is None


def test_a_feasible_bound_serves_only_runs_that_would_search_no_longer() -> None:
    open_ = Bound("feasible", 10.0, 8.0, "cpsat", 1.0, 0.0)
    assert open_.serves(1.0) and open_.serves(0.5) and not open_.serves(2.0)
    assert Bound("optimal", 1.0, 1.0, "cpsat", 0.1, 0.0).serves(60.0)
    assert not hindsight.failed_bound(1.0).serves(1.0)


def test_the_key_is_the_realised_content() -> None:
    key = scenario_key("w", "m", [1.0, 2.0], [1.0, 1.0])
    assert key == scenario_key("w", "m", [1.0, 2.0], [1.0, 1.0])
    others = {
        scenario_key("w", "m", [1.0, 2.001], [1.0, 1.0]),
        scenario_key("w", "m", [1.0, 2.0], [1.0, 1.1]),
        scenario_key("w2", "m", [1.0, 2.0], [1.0, 1.0]),
        scenario_key("w", "m2", [1.0, 2.0], [1.0, 1.0]),
    }
    assert key not in others and len(others) == 4


def jobs() -> list[Job]:
    return [
        Job.of("chain", CHAIN, MACHINE),
        Job.of("pair", PAIR, MACHINE),
        Job.of("triple", TRIPLE, FIVE),
        Job.of("chain", CHAIN, MACHINE),  # the same scenario twice: solved once
    ]


def test_a_cache_hit_solves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = MemoryCache()
    first = perfect_information(jobs(), cache)
    assert first.cached == 0 and sum(first.solved.values()) == 3
    assert first.solved == {"shortcut": 1, "cliques": 1, "cpsat": 1}
    assert first.share("shortcut") == pytest.approx(1 / 3)

    def no_solve(*args: object, **kwargs: object) -> Bound:
        raise AssertionError("a cached scenario was solved again")

    monkeypatch.setattr(hindsight, "bound_one", no_solve)
    second = perfect_information(jobs(), cache)
    assert second.cached == 3 and not second.solved
    assert second.by_key == first.by_key


def test_a_longer_search_solves_an_unproven_bound_again() -> None:
    cache = MemoryCache()
    cache.put({"triple": Bound("feasible", 5.0, 3.0, "cpsat", 0.01, 0.0, (0.0, 3.0, 3.0))})
    found = perfect_information([Job.of("triple", TRIPLE, FIVE)], cache, time_limit=1.0)
    assert found.cached == 0
    assert found.by_key["triple"].status == "optimal"
    assert cache.get(["triple"])["triple"].makespan == pytest.approx(4.0)


def test_errors_are_not_cached() -> None:
    cache = MemoryCache()
    cache.put({"x": hindsight.failed_bound(1.0)})
    assert cache.get(["x"]) == {}


def test_the_store_keeps_bounds_across_runs(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    store = Store(db)
    first = perfect_information(jobs(), StoreBounds(store))
    store.close()
    store = Store(db)
    try:
        again = perfect_information(jobs(), StoreBounds(store))
    finally:
        store.close()
    assert again.cached == 3 and not again.solved
    assert again.by_key == first.by_key
    read = Store(db, read_only=True)
    try:
        assert set(StoreBounds(read).get(["chain", "pair", "triple", "nope"])) == {"chain", "pair", "triple"}
    finally:
        read.close()
    Store(db, fresh=True).close()  # --fresh drops the bounds too
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM bounds").fetchone() == (0,)


def test_a_store_from_before_the_bounds_table_opens_and_gains_it(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    Store(db).close()
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE bounds")
    read = Store(db, read_only=True)
    try:
        assert StoreBounds(read).get(["chain"]) == {}
    finally:
        read.close()
    store = Store(db)
    try:
        StoreBounds(store).put({"chain": bound_one(CHAIN, MACHINE)})
        assert set(StoreBounds(store).get(["chain"])) == {"chain"}
    finally:
        store.close()


def test_a_bounds_table_of_another_shape_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "odd.sqlite"
    Store(db).close()
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE bounds")
        con.execute("CREATE TABLE bounds (x)")
    with pytest.raises(Exception, match="table 'bounds' is not peakopt's"):
        Store(db)


@pytest.mark.slow
def test_the_pools_give_the_same_bounds_as_one_process(tmp_path: Path) -> None:
    alone = perfect_information(jobs(), MemoryCache())
    with open_executor(Where(jobs=2)) as executor:
        pooled = perfect_information(jobs(), MemoryCache(), executor=executor, chunk=1)
    assert {k: b.makespan for k, b in pooled.by_key.items()} == {
        k: b.makespan for k, b in alone.by_key.items()
    }
    assert pooled.solved == alone.solved


def test_scenario_jobs_key_each_sample_by_its_content() -> None:
    still = hindsight.scenario_jobs(PAIR, MACHINE, draw(PAIR, 5, seed=1, noise=Noise()))
    assert len({j.key for j in still}) == 1  # no noise: five copies of the nominal workflow
    found = hindsight.scenario_jobs(PAIR, MACHINE, draw(PAIR, 5, seed=1, noise=Noise(0.25)))
    assert [j.index for j in found] == list(range(5))
    assert len({j.key for j in found}) == 5
    again = hindsight.scenario_jobs(PAIR, MACHINE, draw(PAIR, 8, seed=1, noise=Noise(0.25)))
    assert [j.key for j in again[:5]] == [j.key for j in found]  # common random numbers
    other = hindsight.scenario_jobs(PAIR, FIVE, draw(PAIR, 5, seed=1, noise=Noise(0.25)))
    assert not {j.key for j in other} & {j.key for j in found}
    bounds = perfect_information([*still, *found], MemoryCache())
    assert sum(bounds.solved.values()) == 6  # the five still ones are solved once
    assert bounds.by_key[still[0].key].makespan == pytest.approx(2.0)
    for job in found:
        assert_accepted(bounds.by_key[job.key], job.workflow(), MACHINE)
