"""One name, one meaning: no two packages define the same public name for different objects.

A public name is one a module defines at its top level (a function, a class,
an assignment: constants and type aliases too) without a leading underscore,
or lists in ``__all__``. The same object reached from two packages (a
re-export) is one meaning; type variables are placeholders of their own
module's signatures and are left out. Within one package, parallel modules
may share a name for one role (each solver backend's ``build``).
"""

from __future__ import annotations

import ast
import importlib
import tomllib
import types
from collections import defaultdict
from typing import Any, ParamSpec, TypeVar

from paths import ROOT

PACKAGES: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
FOLDERS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]

#: (module name, its source, the module) for every module of every listed package.
Source = tuple[str, str, types.ModuleType]


def modules() -> list[Source]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / FOLDERS[package]).glob("*.py")):
            if path.stem == "__main__":  # runs the command line; defines nothing
                continue
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            found.append((name, path.read_text(), importlib.import_module(name)))
    return found


def defined(source: str, module: types.ModuleType) -> set[str]:
    """The public names ``source`` defines at its top level, and its ``__all__``."""
    names: set[str] = set(getattr(module, "__all__", ()))
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def package_of(module: str, sources: list[Source]) -> str:
    packages = {name for name, _, found in sources if hasattr(found, "__path__")}
    return module if module in packages else module.rpartition(".")[0]


def clashes(sources: list[Source]) -> dict[str, list[str]]:
    """Per public name that means two things across packages, where each of its objects is defined."""
    meanings: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, source, found in sources:
        for name in defined(source, found):
            value: Any = getattr(found, name)
            if isinstance(value, TypeVar | ParamSpec | types.ModuleType):
                continue
            meanings[name][id(value)].append(module)
    wrong = {}
    for name, objects in meanings.items():
        packages = {package_of(m, sources) for places in objects.values() for m in places}
        if len(objects) > 1 and len(packages) > 1:
            wrong[name] = sorted(m for places in objects.values() for m in places)
    return wrong


def test_no_public_name_means_two_things_across_packages() -> None:
    wrong = clashes(modules())
    assert not wrong, "\n".join(f"{name}: {', '.join(places)}" for name, places in sorted(wrong.items()))


def fake(name: str, source: str, package: bool = False) -> Source:
    module = types.ModuleType(name)
    if package:
        module.__path__ = []
    exec(compile(source, name, "exec"), module.__dict__)
    return name, source, module


def test_the_check_finds_a_name_defined_twice_and_passes_a_re_export() -> None:
    first = fake("peakopt.a.m", "class Options: ...\nT = __import__('typing').TypeVar('T')\n")
    second = fake("peakopt.b.m", "class Options: ...\nT = __import__('typing').TypeVar('T')\n")
    assert clashes([first, second]) == {"Options": ["peakopt.a.m", "peakopt.b.m"]}
    re_export = fake("peakopt.b", "__all__ = ['Options']\n", package=True)
    re_export[2].Options = first[2].Options
    assert clashes([first, re_export]) == {}  # the same object: one meaning
    sibling = fake("peakopt.a.n", "class Options: ...\n")
    assert clashes([first, sibling]) == {}  # one package's parallel modules
