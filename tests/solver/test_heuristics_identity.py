"""The identity of a method's code: it changes with the plug-in's sources, and only then."""

from __future__ import annotations

import importlib
import sys
import types
from importlib.metadata import version
from pathlib import Path

import pytest

from peakopt.solver.heuristics import load_plugin, parse_method
from peakopt.solver.heuristics.identity import _module_code, builtin_code, package_code

PLUGIN = "def f(workflow, machine):\n    return {{t.id: {start} for t in workflow.tasks}}\n"


def fresh(*modules: str) -> None:
    """Forget imported modules, as a new process would."""
    for name in modules:
        sys.modules.pop(name, None)
    importlib.invalidate_caches()


def test_a_plugin_s_identity_follows_its_module_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "plug_id_a.py").write_text(PLUGIN.format(start=0))
    first = load_plugin("plug_id_a:f").code
    assert first.startswith("plugin:") and load_plugin("plug_id_a:f").code == first
    (tmp_path / "plug_id_a.py").write_text(PLUGIN.format(start=1))
    fresh("plug_id_a")
    assert load_plugin("plug_id_a:f").code != first
    (tmp_path / "plug_id_a.py").write_text(PLUGIN.format(start=0))
    fresh("plug_id_a")
    assert load_plugin("plug_id_a:f").code == first  # the content counts, not the time
    fresh("plug_id_a")


def test_a_re_exported_function_counts_the_module_that_defines_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    package = tmp_path / "plug_id_b"
    package.mkdir()
    (package / "__init__.py").write_text("from plug_id_b.impl import f\n")
    (package / "impl.py").write_text(PLUGIN.format(start=0))
    first = load_plugin("plug_id_b:f").code
    (package / "impl.py").write_text(PLUGIN.format(start=2))
    fresh("plug_id_b", "plug_id_b.impl")
    assert load_plugin("plug_id_b:f").code != first
    fresh("plug_id_b", "plug_id_b.impl")


def test_a_module_without_a_file_is_known_by_its_distribution_version() -> None:
    assert _module_code(types.ModuleType("rich")) == f"rich=={version('rich')}"
    assert _module_code(types.ModuleType("no_such_distribution_here")) == "unknown"


def test_the_built_ins_share_the_identity_of_the_heuristics_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parse_method("asap").code == parse_method("fbi:best-rule").code == builtin_code()
    assert builtin_code() == f"peakopt.heuristics:{package_code('peakopt.solver.heuristics')}"
    monkeypatch.syspath_prepend(str(tmp_path))
    package = tmp_path / "plug_id_c"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text("A = 1\n")
    importlib.import_module("plug_id_c")
    first = package_code("plug_id_c")
    (package / "rules.py").write_text("A = 2\n")
    package_code.cache_clear()
    assert package_code("plug_id_c") != first  # an edit of any of its files
    fresh("plug_id_c")


def test_a_package_code_sees_its_subpackages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the oracle's rooms are subpackages: an edit of oracle/judge/metrics.py must make its rows stale
    monkeypatch.syspath_prepend(str(tmp_path))
    package = tmp_path / "plug_id_n"
    (package / "room").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "room" / "__init__.py").write_text("")
    (package / "room" / "metrics.py").write_text("A = 1\n")
    importlib.import_module("plug_id_n")
    first = package_code("plug_id_n")
    (package / "room" / "metrics.py").write_text("A = 2\n")
    package_code.cache_clear()
    assert package_code("plug_id_n") != first
    fresh("plug_id_n")
