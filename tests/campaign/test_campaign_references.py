"""One reference store interface: the JSON Lines file of ``solve -o``, a store's refs table, a file read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from peakopt.campaign.jsonl import JsonLinesReferences
from peakopt.campaign.references import ReferenceFile, ReferenceStore, StoreReferences
from peakopt.campaign.store import Store
from peakopt.instances import load
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle import InvalidReference
from peakopt.solver import solve

SUITE = load("bundled:refund")
REFUND, WORKER = SUITE.workflows[0], SUITE.machine("worker")
SMALL = Machine(name="small", capacity={"cpu": 1, "memory_mb": 8192})


@pytest.fixture(scope="module")
def results() -> dict[str, SolveResult]:
    return {m.name: solve(REFUND, m, time_limit=5, workers=1) for m in (WORKER, SMALL)}


@dataclass(frozen=True)
class Destination:
    """What ``peakopt.cli.outputs.Output`` offers the JSON Lines store (no command line needed)."""

    target: Path
    path: str = "refs.jsonl"
    option: str = "-o"
    special: bool = False

    @property
    def partial(self) -> Path:
        return self.target.with_name(self.target.name + ".partial")


def jsonl(folder: Path) -> Callable[[], ReferenceStore]:
    return lambda: JsonLinesReferences(Destination(folder / "refs.jsonl"), resume=True, warn=print)


def sqlite(folder: Path) -> Callable[[], ReferenceStore]:
    def opened() -> ReferenceStore:
        return StoreReferences(Store(folder / "r.sqlite"))

    return opened


@pytest.fixture(params=[jsonl, sqlite], ids=["jsonl", "sqlite"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], ReferenceStore]]:
    """Opens the same reference store again (as a resumed run does)."""
    opened: list[ReferenceStore] = []

    def again() -> ReferenceStore:
        found: ReferenceStore = request.param(tmp_path)()
        opened.append(found)
        return found

    yield again
    for found in opened:  # a store opened only to read is closed too, never left to the collector
        if isinstance(found, StoreReferences):
            found.store.close()
        elif isinstance(found, JsonLinesReferences):
            found.close()


def test_what_a_run_adds_is_there_for_the_next_run(
    home: Callable[[], ReferenceStore], results: dict[str, SolveResult]
) -> None:
    first = home()
    assert len(first) == 0 and not first.has(REFUND, WORKER)
    first.add(REFUND, WORKER, results["worker"])
    assert first.get(REFUND, WORKER) == results["worker"] and not first.has(REFUND, SMALL)
    first.finish()
    second = home()
    assert len(second) == 1 and second.get(REFUND, WORKER) == results["worker"]
    second.add(REFUND, SMALL, results["small"])
    second.finish()
    assert home().get(REFUND, SMALL) == results["small"]


def test_the_jsonl_store_names_pairs_as_the_file_does_and_the_sqlite_store_by_content(
    tmp_path: Path, results: dict[str, SolveResult]
) -> None:
    other = Workflow.model_validate({"id": REFUND.id, "tasks": [{"id": "only", "duration": 1}]})
    by_name, by_content = jsonl(tmp_path)(), sqlite(tmp_path)()
    for store in (by_name, by_content):
        store.add(REFUND, WORKER, results["worker"])
    assert by_name.has(other, WORKER)  # the same id and name: the file cannot tell them apart
    assert not by_content.has(other, WORKER)  # another workflow under the same id
    by_name.finish()
    assert isinstance(by_content, StoreReferences)
    by_content.store.close()


def test_a_jsonl_store_streams_to_its_side_file_until_it_finishes(
    tmp_path: Path, results: dict[str, SolveResult]
) -> None:
    out = Destination(tmp_path / "refs.jsonl")
    refs = JsonLinesReferences(out, resume=False, warn=print)
    refs.add(REFUND, WORKER, results["worker"])
    assert not out.target.exists()
    (line,) = out.partial.read_text().splitlines()
    assert SolveResult.model_validate_json(line) == results["worker"]
    refs.finish()
    assert not out.partial.exists() and out.target.read_text() == line + "\n"


def test_a_reference_file_is_checked_against_the_inputs_it_is_used_for(
    tmp_path: Path, results: dict[str, SolveResult]
) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in results.values()))
    found = ReferenceFile(path, [(REFUND, WORKER), (REFUND, SMALL)])
    assert len(found) == 2 and found.get(REFUND, SMALL) == results["small"]
    wrong = results["worker"].model_copy(update={"makespan": 1.0, "lower_bound": 1.0})
    path.write_text(json.dumps(wrong.model_dump(mode="json")) + "\n")
    with pytest.raises(InvalidReference, match="line 1: reference for workflow 'refund' on machine 'worker'"):
        ReferenceFile(path, [(REFUND, WORKER)])
