"""The eval's card (evals/eval.yaml) and README: their sample counts and baseline figures are the tasks'."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
import yaml

from peakopt.campaign.floor import every_pair, hard_pairs, solved_references, suite_floor
from peakopt.evals.schedule import TASK_VERSION
from peakopt.evals.suites import Selection, load_suite


def card() -> dict[str, object]:
    loaded = yaml.safe_load((files("peakopt.evals") / "eval.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_card_names_its_tasks_solvers_and_version() -> None:
    found = card()
    assert found["version"] == TASK_VERSION
    tasks = {t["name"]: t for t in found["tasks"]}  # type: ignore[attr-defined]
    assert set(tasks) == {"peakopt/schedule", "peakopt/plan"}
    suite = load_suite("bundled:default")
    assert tasks["peakopt/schedule"]["dataset_samples"] == len(Selection().pairs(suite))
    assert tasks["peakopt/schedule"]["splits"]["all"] == len(Selection().pairs(suite))
    assert tasks["peakopt/plan"]["dataset_samples"] == len(suite.workflows)
    assert {s["name"] for s in found["solvers"]} == {"peakopt/oracle", "peakopt/trivial"}  # type: ignore[attr-defined]
    assert (files("peakopt.evals") / "README.md").is_file()


@pytest.mark.slow
def test_the_hard_split_and_the_baselines_are_as_stated() -> None:
    suite = load_suite("bundled:default")
    refs = solved_references(suite)
    hard = hard_pairs(suite, refs)
    [schedule] = [t for t in card()["tasks"] if t["name"] == "peakopt/schedule"]  # type: ignore[attr-defined]
    assert schedule["splits"]["hard"] == len(hard)
    readme = (Path(str(files("peakopt.evals"))) / "README.md").read_text()
    # the Evaluation Report's rows: | model | solver | split | samples | epochs | efficiency | ...
    table = [line.split(" | ") for line in readme.splitlines() if line.startswith("| mockllm/model |")]
    found = {(row[1], row[2]): (int(row[3]), row[5].split(" [")[0]) for row in table}
    whole = {line.answer: line for line in suite_floor(suite, refs).lines}
    split = {
        line.answer: line
        for line in suite_floor(
            suite, refs, [p for p in every_pair(suite) if (p[0].id, p[1].name) in hard]
        ).lines
    }
    assert found[("peakopt/oracle", "all")] == (len(refs), "1.000")
    assert found[("peakopt/oracle", "hard")] == (len(hard), "1.000")
    for answer in ("zero", "serial", "asap"):
        solver = f"peakopt/trivial answer={answer}"
        assert found[(solver, "all")] == (len(refs), f"{whole[answer].efficiency:.3f}"), answer
        assert found[(solver, "hard")] == (len(hard), f"{split[answer].efficiency:.3f}"), answer
