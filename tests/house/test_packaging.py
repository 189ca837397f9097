"""The owner's folders map to peakopt.<name>; a package missing from the list drops out of the wheel."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points

import pytest
from paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
TOP = ("models", "instances", "solver", "oracle", "campaign", "evals", "runtime", "plots", "cli")


def package_folders() -> dict[str, str]:
    """peakopt.<dotted> -> folder, for every folder holding an __init__.py."""
    found = {}
    for top in TOP:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            folder = init.parent.relative_to(ROOT).as_posix()
            found["peakopt." + folder.replace("/", ".")] = folder
    return found


def test_every_package_folder_is_listed() -> None:
    found = package_folders()
    assert set(found) <= set(SETUPTOOLS["packages"]), set(found) - set(SETUPTOOLS["packages"])
    for package, folder in found.items():
        assert SETUPTOOLS["package-dir"].get(package) == folder


def test_listed_packages_exist_and_import() -> None:
    found = package_folders()
    for package in SETUPTOOLS["packages"]:
        assert package in found, f"{package} is listed but has no __init__.py"
        module = importlib.import_module(package)
        assert module.__file__ is not None


def test_no_top_level_init() -> None:
    assert not (ROOT / "peakopt").exists()
    assert not (ROOT / "__init__.py").exists()


@pytest.mark.slow
def test_console_script_and_module_entry_points() -> None:
    assert PYPROJECT["project"]["scripts"]["peakopt"] == "peakopt.cli.main:main"
    out = subprocess.run(
        [sys.executable, "-m", "peakopt.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert "peakopt, version" in out.stdout


def test_runtime_dependencies_have_lower_bounds() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    deps = PYPROJECT["project"]["dependencies"] + [d for extra in extras.values() for d in extra]
    # an extra may include another of peakopt's own ("peakopt[eval]" in dev): that one has no version
    assert all(">=" in d or d.startswith("peakopt[") for d in deps), deps
    names = {d.split(">=")[0].split("[")[0] for d in PYPROJECT["project"]["dependencies"]}
    assert {
        "ortools",
        "pulp",
        "numpy",
        "networkx",
        "pydantic",
        "click",
        "psplib",
        "json-repair",
        "rich",
        "scipy",
    } <= names


def test_the_dev_extra_carries_every_other_extra() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    included = {
        name
        for d in extras["dev"]
        if d.startswith("peakopt[")
        for name in d.removeprefix("peakopt[").removesuffix("]").split(",")
    }
    assert included == set(extras) - {"dev"}


def test_the_core_leaves_the_extras_libraries_out() -> None:
    names = {d.split(">=")[0].split("[")[0] for d in PYPROJECT["project"]["dependencies"]}
    assert not names & {"matplotlib", "dask", "distributed", "psutil", "inspect-ai"}, names


def test_inspect_finds_the_tasks_through_its_entry_point() -> None:
    assert PYPROJECT["project"]["entry-points"]["inspect_ai"] == {"peakopt": "peakopt.evals._registry"}
    (found,) = [e for e in entry_points(group="inspect_ai") if e.name == "peakopt"]  # as installed
    module = found.load()
    assert {"schedule", "plan"} <= set(dir(module))


def test_bundled_data_is_package_data() -> None:
    data = SETUPTOOLS["package-data"]["peakopt.instances.data"]
    assert "*.json" in data
