"""The tests mirror the house: the tests of ``peakopt.<package>`` are found in ``tests/<package>/``."""

from __future__ import annotations

import tomllib

from project_root import ROOT

TESTS = ROOT / "tests"
SETTINGS = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: the top-level packages (pyproject.toml's package-dir), each a folder of tests
PACKAGES = {
    name.split(".")[1] for name in SETTINGS["tool"]["setuptools"]["package-dir"] if name.count(".") == 1
}
#: beside them: the documentation site's tests, and the house's (layout, imports, packaging)
FOLDERS = PACKAGES | {"docs", "house"}


def test_every_test_module_is_in_the_folder_of_a_package() -> None:
    misplaced = sorted(
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("test_*.py")
        if path.parent.parent != TESTS or path.parent.name not in FOLDERS
    )
    assert misplaced == [], f"move each into tests/<package>/, one of {sorted(FOLDERS)}"


def test_a_module_named_after_a_package_is_in_its_folder() -> None:
    # test_oracle_metrics.py is in tests/oracle/, test_cli_score.py in tests/cli/
    wrong = sorted(
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("test_*.py")
        if (named := path.stem.split("_")[1]) in FOLDERS and path.parent.name != named
    )
    assert wrong == []


def test_the_helpers_stay_beside_the_folders_and_every_folder_is_on_the_path() -> None:
    # helpers are imported as top-level modules (pytest's pythonpath), so are the few test modules
    # another one imports names from: each folder is listed, each basename unique
    nested = [p for p in TESTS.rglob("*.py") if p.parent != TESTS and not p.name.startswith("test_")]
    assert nested == []
    listed = set(SETTINGS["tool"]["pytest"]["ini_options"]["pythonpath"])
    assert {f"tests/{folder}" for folder in FOLDERS} <= listed
    names = [p.name for p in TESTS.rglob("*.py")]
    assert len(names) == len(set(names))
