"""One name, one meaning: no two packages define the same public name for different objects.

A public name is one a module defines at its top level (a function, a class,
an assignment: constants and type aliases too) without a leading underscore,
or lists in ``__all__``. A name's meaning is where it is defined: a function or
a class by its ``__module__`` and ``__qualname__``, anything else (a constant,
a type alias) by the module that assigns it, followed through ``from ... import``
for a re-export. So the same object reached from two packages (a re-export) is
one meaning, and two modules that each assign an equal constant (``LIMIT = 5``:
one object for Python, two definitions) are two. Type variables are
placeholders of their own module's signatures and are left out. Within one
package, parallel modules may share a name for one role (each solver backend's
``build``); each room of the oracle is a package of its own.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import tomllib
import types
from collections import defaultdict
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pytest
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


def assigned(source: str) -> set[str]:
    """The names ``source`` binds at its top level by a definition or an assignment (not an import)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def defined(source: str, module: types.ModuleType) -> set[str]:
    """The public names ``source`` defines at its top level, and its ``__all__``."""
    names = assigned(source) | set(getattr(module, "__all__", ()))
    return {n for n in names if not n.startswith("_")}


def package_of(module: str, sources: list[Source]) -> str:
    packages = {name for name, _, found in sources if hasattr(found, "__path__")}
    return module if module in packages else module.rpartition(".")[0]


def top_level(source: str) -> list[ast.stmt]:
    """The statements of ``source``'s top level, with those of its ``if TYPE_CHECKING:`` blocks.

    A lazy face (PEP 562, as :mod:`peakopt.oracle`) names its re-exports in such a block.
    """
    found: list[ast.stmt] = []
    for node in ast.parse(source).body:
        test = node.test if isinstance(node, ast.If) else None
        lazy = isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
        found.extend(node.body if lazy and isinstance(node, ast.If) else [node])
    return found


def imported_from(source: str) -> dict[str, str]:
    """Name -> the module a top-level ``from ... import`` of ``source`` takes it from (absolute imports)."""
    return {
        alias.asname or alias.name: node.module
        for node in top_level(source)
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
        for alias in node.names
    }


def origin(name: str, module: str, value: Any, sources: dict[str, str]) -> str:
    """Where ``value``, bound to ``name`` in ``module``, is defined (see the module docstring)."""
    if isinstance(value, type) or inspect.isroutine(value):
        where, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
        if isinstance(where, str) and isinstance(qualname, str):
            return f"{where}.{qualname}"
    while module in sources and name not in assigned(sources[module]):
        follow = imported_from(sources[module]).get(name)
        if follow is None:
            break
        module = follow  # a re-export: to where it comes from
    return f"{module}.{name}"


def clashes(sources: list[Source]) -> dict[str, list[str]]:
    """Per public name that means two things across packages, where each of its objects is defined."""
    by_name = {module: source for module, source, _ in sources}
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, source, found in sources:
        for name in defined(source, found):
            value: Any = getattr(found, name)
            if isinstance(value, TypeVar | ParamSpec | types.ModuleType):
                continue
            meanings[name][origin(name, module, value, by_name)].append(module)
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
    re_export[2].__dict__["Options"] = first[2].Options
    assert clashes([first, re_export]) == {}  # the same object: one meaning
    sibling = fake("peakopt.a.n", "class Options: ...\n")
    assert clashes([first, sibling]) == {}  # one package's parallel modules


def test_equal_constants_assigned_in_two_packages_are_two_meanings(monkeypatch: Any) -> None:
    first = fake("peakopt.a.m", "LIMIT = 5\nNAME = 'x'\n")
    second = fake("peakopt.b.m", "LIMIT = 5\nNAME = 'x'\n")
    assert first[2].LIMIT is second[2].LIMIT  # one object for Python: identity cannot tell them apart
    assert clashes([first, second]) == {
        "LIMIT": ["peakopt.a.m", "peakopt.b.m"],
        "NAME": ["peakopt.a.m", "peakopt.b.m"],
    }
    monkeypatch.setitem(sys.modules, "peakopt.a.m", first[2])
    re_export = fake("peakopt.b", "from peakopt.a.m import LIMIT\n__all__ = ['LIMIT']\n", package=True)
    assert clashes([first, re_export]) == {}  # imported, not assigned: the one definition
    alias = fake("peakopt.c.m", "from peakopt.a.m import LIMIT\nBOUND = LIMIT\n")
    other = fake("peakopt.d.m", "BOUND = 5\n")
    assert clashes([alias, other]) == {"BOUND": ["peakopt.c.m", "peakopt.d.m"]}  # each assigns it


@pytest.mark.parametrize("face", ["peakopt.instances", "peakopt.models", "peakopt.oracle", "peakopt.solver"])
def test_no_lazily_served_name_is_a_submodules(face: str) -> None:
    # importing a submodule binds it to its package's attribute of that name, after which the
    # face's __getattr__ never runs: `from peakopt.instances import save` would give the module
    package = importlib.import_module(face)
    folder = Path(package.__file__ or "").parent
    children = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if p.is_dir()}
    homes: dict[str, str] = vars(package).get("_HOMES", {})
    assert sorted(set(homes) & children) == []
