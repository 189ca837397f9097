"""The documentation site: every page reachable from the home page, every command in the nav, no
markdown that renders as literal text, and a site that needs no network to be read."""

from __future__ import annotations

import re

import markdown
import pytest
import yaml
from project_root import ROOT

from peakopt.cli.main import COMMANDS

DOCS = ROOT / "docs"
CONFIG = yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def nav_pages(entries: list[object]) -> list[str]:
    """Every page file the nav names, nested sections included."""
    pages: list[str] = []
    for entry in entries:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            if isinstance(value, list):
                pages += nav_pages(value)
            elif isinstance(value, str):
                pages.append(value)
    return pages


def top_pages() -> list[str]:
    """The pages the nav lists at its top level (not inside a section)."""
    return [v for e in CONFIG["nav"] for v in e.values() if isinstance(e, dict) and isinstance(v, str)]


@pytest.mark.parametrize("page", [p for p in top_pages() if p not in ("index.md", "reference/")])
def test_the_home_page_table_links_every_top_level_page(page: str) -> None:
    assert f"]({page}" in (DOCS / "index.md").read_text(), f"docs/index.md does not link {page}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_its_page_in_the_nav(command: str) -> None:
    # convert and schema are sub-forms of validate's page family but have their own pages too
    page = f"commands/{command}.md"
    assert page in nav_pages(CONFIG["nav"]), f"mkdocs.yml's Commands section has no {page}"
    assert (DOCS / page).is_file()


PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "scripts" not in p.parts)


@pytest.mark.parametrize("page", PAGES)
def test_no_list_item_renders_as_literal_text(page: str) -> None:
    # a list item right after an indented paragraph, with no blank line, is folded into that
    # paragraph ("- **Page cache.**" shown as text): Python-Markdown's lazy continuation
    html = markdown.markdown(
        (DOCS / page).read_text(), extensions=["admonition", "attr_list", "tables", "pymdownx.superfences"]
    )
    folded = [
        m.group(0)[:120] for m in re.finditer(r"<p>(?:(?!</p>).)*\n[-*] (?:(?!</p>).)*</p>", html, re.S)
    ]
    assert not folded, folded


def test_the_site_loads_no_web_fonts_and_reads_from_the_file_system() -> None:
    assert CONFIG["theme"].get("font") is False  # Material's default pulls Google Fonts
    assert "offline" in [p if isinstance(p, str) else next(iter(p)) for p in CONFIG["plugins"]]
