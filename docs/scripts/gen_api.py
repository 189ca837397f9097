"""Write the API reference pages from the package list in pyproject.toml (run by mkdocs-gen-files).

One page per package and public module, read by mkdocstrings from the tree of links that
docs/scripts/api_tree.py lays: a package added to, moved in or removed from pyproject.toml
changes the reference with no edit here or in ``mkdocs.yml``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).parent))
from api_tree import ROOT, packages  # scripts beside this one, not a package
from sphinx_roles import convert


def summary(docstring_of: Path) -> str:
    """The first line of a module's docstring, for the index (its Sphinx roles as plain code)."""
    doc = ast.get_docstring(ast.parse(docstring_of.read_text(encoding="utf-8"))) or ""
    return convert(doc.strip().splitlines()[0], lambda name: None) if doc.strip() else ""


def write_pages(found: dict[str, Path]) -> None:
    """One page per package and public module, the index, and the section's navigation."""
    nav = mkdocs_gen_files.Nav()
    index = ["# API reference", "", "Generated from the NumPy docstrings of the installed packages.", ""]
    index += ["| module | what it holds |", "|---|---|"]
    for name, folder in found.items():
        modules = [(name, folder / "__init__.py", Path(*name.split("."), "index.md"))]
        modules += [
            (f"{name}.{p.stem}", p, Path(*name.split("."), f"{p.stem}.md"))
            for p in sorted(folder.glob("*.py"))
            if not p.name.startswith("_")
        ]
        for dotted, source, doc_path in modules:
            parts = tuple(dotted.split("."))
            nav[parts] = doc_path.as_posix()
            with mkdocs_gen_files.open(Path("reference", doc_path), "w") as page_file:
                page_file.write(f"::: {dotted}\n")
            mkdocs_gen_files.set_edit_path(Path("reference", doc_path), source.relative_to(ROOT))
            cell = summary(source).replace("|", "\\|")  # a bar would end the table cell
            index.append(f"| [`{dotted}`]({doc_path.as_posix()}) | {cell} |")
    with mkdocs_gen_files.open("reference/index.md", "w") as index_file:
        index_file.write("\n".join(index) + "\n")
    with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as nav_file:
        nav_file.write("* [Overview](index.md)\n")
        nav_file.writelines(nav.build_literate_nav())


write_pages(packages())
