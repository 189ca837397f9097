"""The installed packages as griffe can read them: a tree of links ``peakopt/<name> -> <folder>``.

The owner's folders are installed as ``peakopt.<folder>`` with no ``peakopt/`` folder on disk,
which griffe cannot follow; so this lays a tree of links (as ``.ci/typecheck`` does for mypy)
where ``mkdocs.yml`` points mkdocstrings, from the package list in pyproject.toml. It is a MkDocs
hook: mkdocstrings reads its search paths when its configuration is read, so the tree must be
there at start-up, before any page is generated (docs/scripts/gen_api.py writes the pages).
"""

from __future__ import annotations

import ast
import shutil
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# mkdocs.yml's mkdocstrings `paths` names this folder (build/ is ignored by git)
TREE = ROOT / "build" / "api-src"
# the command line is documented by its --help (cli.md), not as an API
SKIPPED = ("peakopt.cli",)


def packages() -> dict[str, Path]:
    """Every installed package that holds Python code -> its folder, from pyproject.toml.

    Returns
    -------
    dict[str, Path]
        Dotted package name -> its folder, in pyproject.toml's order.
    """
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = setuptools["package-dir"]
    found = {}
    for name in setuptools["packages"]:
        if name.startswith(SKIPPED):
            continue
        folder = ROOT / folders.get(name, name.removeprefix("peakopt.").replace(".", "/"))
        if any(p.name != "__init__.py" for p in folder.glob("*.py")) or _has_api(folder / "__init__.py"):
            found[name] = folder
    return found


def _has_api(init: Path) -> bool:
    """Whether a package's ``__init__.py`` holds more than its docstring."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in tree.body
    )


def lay_tree(found: dict[str, Path]) -> None:
    """Link ``TREE/peakopt/<name>`` to each top-level package's folder."""
    shutil.rmtree(TREE, ignore_errors=True)
    (TREE / "peakopt").mkdir(parents=True)
    for name, folder in found.items():
        parts = name.split(".")
        if len(parts) == 2:
            (TREE / "peakopt" / parts[1]).symlink_to(folder, target_is_directory=True)


def on_startup(**kwargs: Any) -> None:
    """MkDocs hook: lay the tree before mkdocstrings reads its search paths."""
    lay_tree(packages())
