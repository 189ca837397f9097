"""Plug-in heuristics: module:function, entry points, and every failure naming the plug-in."""

from __future__ import annotations

from pathlib import Path

import pytest
from heuristics_helpers import judged

from peakopt.instances import load
from peakopt.models import PeakoptError
from peakopt.solver.heuristics import GROUP, PluginError, load_plugin, parse_method, run

SUITE = load("bundled:refund")
WORKFLOW, MACHINE = SUITE.workflows[0], SUITE.machines[0]
HERE = "heuristics_plugin_examples"


def test_a_mapping_plugin_becomes_a_schedule_named_after_it() -> None:
    name = f"{HERE}:one_at_a_time"
    schedule = run(WORKFLOW, MACHINE, name)
    assert schedule.source == name and schedule.machine == "worker"
    score = judged(WORKFLOW, MACHINE, schedule)
    assert score.safe and score.makespan == pytest.approx(sum(t.length for t in WORKFLOW.tasks))


def test_a_plugin_taking_seed_gets_it_and_may_return_a_schedule() -> None:
    name = f"{HERE}:seeded"
    assert load_plugin(name).takes_seed and not load_plugin(f"{HERE}:garbage").takes_seed
    schedule = run(WORKFLOW, MACHINE, name, seed=5)
    assert schedule.source == name
    assert min(schedule.starts.values()) == 5.0
    assert run(WORKFLOW, None, name).machine is None


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("raises", "raised ValueError: no idea what to do"),
        ("garbage", "returned list, expected a Schedule or a mapping"),
        ("misses", "returned no start for 5 task(s): 'lookup_order', 'fraud_score'"),
        ("ghost", "returned a start for unknown task 'ghost'"),
        ("not_a_number", "returned start 'soon' for task 'lookup_order', not a number"),
        ("infinite", "returned start inf for task"),
        ("boolean", "returned start True for task"),
        ("other_workflow", "returned a schedule of workflow 'elsewhere', expected 'refund'"),
    ],
)
def test_bad_results_raise_an_error_naming_the_plugin(function: str, message: str) -> None:
    name = f"{HERE}:{function}"
    with pytest.raises(PluginError) as caught:
        run(WORKFLOW, MACHINE, name)
    text = str(caught.value)
    assert text.startswith(f"plug-in '{name}'") and message in text
    assert "\n" not in text
    assert isinstance(caught.value, PeakoptError)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz' (ModuleNotFoundError"),
        (f"{HERE}:nowhere", f"module '{HERE}' has no attribute 'nowhere'"),
        (f"{HERE}:NOT_CALLABLE", "'NOT_CALLABLE' is not callable"),
        (f"{HERE}:", "expected module:function"),
        (":f", "expected module:function"),
    ],
)
def test_unloadable_plugins_are_named(spec: str, message: str) -> None:
    with pytest.raises(PluginError, match="plug-in") as caught:
        parse_method(spec)
    assert str(caught.value).startswith(f"plug-in {spec!r}") and message in str(caught.value)


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: str) -> None:
    """A fake installed distribution registering ``entries`` in the plug-in group."""
    info = tmp_path / "peakopt_fake_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: peakopt-fake-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entries}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_entry_point_plugins_run_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, f"backtoback = {HERE}:one_at_a_time\nbroken = no_such_module_xyz:f")
    schedule = run(WORKFLOW, MACHINE, "backtoback")
    assert schedule.source == "backtoback" and judged(WORKFLOW, MACHINE, schedule).safe
    with pytest.raises(PluginError, match="plug-in 'broken': cannot load no_such_module_xyz:f"):
        parse_method("broken")


def test_builtin_names_win_over_entry_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, f"asap = {HERE}:garbage")
    assert run(WORKFLOW, MACHINE, "asap").starts["decide"] == pytest.approx(4.8)
