"""The tests mirror the house: the tests of ``peakopt.<package>`` are found in ``tests/<package>/``."""

from __future__ import annotations

import ast
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
    # helpers are imported as top-level modules (pytest's pythonpath): each folder is listed too,
    # and each basename unique
    nested = [p for p in TESTS.rglob("*.py") if p.parent != TESTS and not p.name.startswith("test_")]
    assert nested == []
    listed = set(SETTINGS["tool"]["pytest"]["ini_options"]["pythonpath"])
    assert {f"tests/{folder}" for folder in FOLDERS} <= listed
    names = [p.name for p in TESTS.rglob("*.py")]
    assert len(names) == len(set(names))


def imported_test_modules(source: str) -> list[str]:
    """What ``source`` imports of a test module: a dotted name with a ``test_*`` part, or in ``tests``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            # a name test_* imported from a module is a test module, or a test pytest would run twice
            names = [
                node.module,
                *(f"{node.module}.{a.name}" for a in node.names if a.name.startswith("test_")),
            ]
        else:
            continue
        found += [
            n for n in names if n.split(".")[0] == "tests" or any(p.startswith("test_") for p in n.split("."))
        ]
    return found


def test_the_import_check_finds_each_way_of_importing_a_test_module() -> None:
    source = "import test_a\nfrom test_b import X\nfrom tests.c import helpers\nfrom c import test_d, e\n"
    found = imported_test_modules(source + "from solver_helpers import generated\nimport os.path\n")
    assert found == ["test_a", "test_b", "tests.c", "c.test_d"]


def test_no_test_module_imports_another() -> None:
    # the names two test modules share live in a *_helpers.py module beside the folders
    found = {
        str(path.relative_to(ROOT)): names
        for path in [*TESTS.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]
        if (names := imported_test_modules(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "move the names they share into a *_helpers.py module"
