"""The documentation site: every page reachable from the home page, every command in the nav, no
markdown that renders as literal text, and a site that needs no network to be read."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as CI builds it (strict), into a folder of this run's own."""
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


# what a page loads (scripts, stylesheets, fonts, icons, pictures); a link (<a href>) is followed
# only when clicked, so an external one is fine
LOADS = re.compile(r'<(?:script|img|iframe|source)\b[^>]*\bsrc="([^"]*)"|<link\b[^>]*\bhref="([^"]*)"')
CSS_URL = re.compile(r"url\((['\"]?)([^)'\"]+)\1\)|@import\s+['\"]([^'\"]+)")
LINKS = re.compile(r'<a\b[^>]*\bhref="([^"#]*)(?:#[^"]*)?"')


def pages(site: Path) -> list[Path]:
    """The built pages; 404.html is a web server's answer (its links are from the site's root)."""
    return sorted(page for page in site.rglob("*.html") if page.name != "404.html")


@pytest.mark.slow
def test_the_built_site_loads_nothing_from_the_network(site: Path) -> None:
    remote = sorted(
        {
            f"{page.relative_to(site)}: {url}"
            for page in pages(site)
            for match in LOADS.finditer(page.read_text(encoding="utf-8"))
            if (url := match.group(1) or match.group(2)).startswith(("http:", "https:", "//"))
        }
        | {
            f"{sheet.relative_to(site)}: {url}"
            for sheet in site.rglob("*.css")
            for match in CSS_URL.finditer(sheet.read_text(encoding="utf-8"))
            if (url := match.group(2) or match.group(3)).startswith(("http:", "https:", "//"))
        }
    )
    assert not remote, remote[:20]


@pytest.mark.slow
def test_the_built_site_is_browsable_from_the_file_system(site: Path) -> None:
    # file:// shows no folder's index.html: every internal link names an .html file that exists
    assert (site / "index.html").is_file() and (site / "search" / "search_index.js").is_file()
    broken = []
    for page in pages(site):
        for match in LINKS.finditer(page.read_text(encoding="utf-8")):
            url = html.unescape(match.group(1))
            if not url or url.startswith(("http:", "https:", "mailto:", "//")):
                continue
            target = (page.parent / url).resolve()
            if not target.is_file() or target.suffix not in (".html", ".png", ".json", ".jsonl"):
                broken.append(f"{page.relative_to(site)}: {url}")
    assert not broken, sorted(set(broken))[:20]


@pytest.mark.slow
def test_parameters_documented_together_show_their_own_types(site: Path) -> None:
    # Controller documents "workflow, machine" on one line; griffe alone typed both as Workflow
    page = (site / "reference" / "peakopt" / "runtime" / "controller.html").read_text(encoding="utf-8")
    row = re.search(r"<td>\s*<code>machine</code>\s*</td>\s*<td>(.*?)</td>", page, re.S)
    assert row is not None and 'title="Machine' in row.group(1) and "Workflow" not in row.group(1)
