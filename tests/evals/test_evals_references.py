"""The references cache of the Inspect tasks: where it is, solved once, resumed, refreshed on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evals_helpers import OPT, write_suite

from peakopt.evals.references import cache_dir, cached_references, checked_references
from peakopt.evals.suites import load_suite
from peakopt.models import content_hash


def test_the_cache_lives_under_peakopt_cache_else_xdg_else_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEAKOPT_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" / "references"
    monkeypatch.delenv("PEAKOPT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "peakopt" / "references"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "peakopt" / "references"


def test_the_test_run_has_a_cache_of_its_own() -> None:
    # tests/conftest.py points PEAKOPT_CACHE at a folder of this run: no test (nor a subprocess it
    # starts) writes into the user's ~/.cache/peakopt
    home = Path.home() / ".cache" / "peakopt"
    assert not cache_dir().is_relative_to(home) and "peakopt-test-cache-" in str(cache_dir())


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
    return write_suite(tmp_path / "suite.json", ("a", "b", "c"))


def pairs_of(path: Path) -> list:  # type: ignore[type-arg]
    loaded = load_suite(str(path))
    return [(w, m) for w in loaded.workflows for m in loaded.machines]


def lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_references_are_solved_once_into_a_file_named_by_the_suites_content(suite: Path) -> None:
    pairs = pairs_of(suite)
    path = cached_references(load_suite(str(suite)), pairs[:2], 10.0)
    assert path == cache_dir() / f"{content_hash(load_suite(str(suite)))}.jsonl"
    assert sorted(r["workflow"] for r in lines(path)) == ["a", "b"]  # in the order they finish
    assert not path.with_name(path.name + ".partial").exists()
    assert sorted(p.name for p in cache_dir().iterdir()) == [path.name]  # no lock file left behind
    # a marked record stays: a pair already held is not solved again; a new pair is added
    marked = [r | {"seconds": 123.0} for r in lines(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in marked))
    cached_references(load_suite(str(suite)), pairs, 10.0)
    found = {r["workflow"]: r for r in lines(path)}
    assert found["a"]["seconds"] == found["b"]["seconds"] == 123.0 and found["c"]["seconds"] != 123.0
    known = checked_references(path, pairs)
    assert [r.makespan for r in known.values()] == [pytest.approx(OPT)] * 3


def test_an_interrupted_run_is_resumed_and_a_failed_solve_is_tried_again(suite: Path) -> None:
    pairs = pairs_of(suite)
    path = cached_references(load_suite(str(suite)), pairs[:1], 10.0)
    solved = lines(path)[0]
    path.unlink()
    partial = path.with_name(path.name + ".partial")  # what a killed run left
    failed = {"workflow": "b", "machine": "worker", "status": "error", "message": "worker lost"}
    partial.write_text(json.dumps(solved | {"seconds": 123.0}) + "\n" + json.dumps(failed) + "\n")
    cached_references(load_suite(str(suite)), pairs, 10.0)
    found = {r["workflow"]: r for r in lines(path)}
    assert found["a"]["seconds"] == 123.0
    assert found["b"]["status"] == "optimal" and found["c"]["status"] == "optimal"
    assert not partial.exists()


def test_another_suite_content_is_another_cache_file(suite: Path, tmp_path: Path) -> None:
    other = write_suite(tmp_path / "other.json", ("a", "b"))
    first = cached_references(load_suite(str(suite)), pairs_of(suite)[:1], 10.0)
    second = cached_references(load_suite(str(other)), pairs_of(other)[:1], 10.0)
    assert first != second and first.parent == second.parent
