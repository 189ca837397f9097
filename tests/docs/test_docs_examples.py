"""The code examples of the README and the documentation site run as written.

Page by page, in a fresh folder, in order (a file one block writes is there for the next):
every ``$ ...`` line of a ```` ```console ```` block runs in bash with this environment's
``peakopt`` first on PATH, every ```` ```python ```` block runs in a fresh interpreter, and a
block with a ``title="FILE"`` (a JSON Lines example shown on the page) is written to FILE first.
``../shared`` is the benchmark data, as beside a checkout. What a block shows is checked where
it is exact: a command shown with an ``Error:`` line must exit 1, any other must exit 0, and its
``OK``, ``Warning:``, ``Error:``, ``wrote`` and closing-count lines must be printed word for
word; a ``# ...`` comment under a ``print(...)`` is what it prints. A block that cannot run here is written as
```` ```text ````, never skipped: any other language fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from paths import ROOT, SHARED

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = ("console", "python")
SHOWN = ("json", "toml", "text")
# the README's install-and-test lines are copied into a fresh shell, not run by a test
INSTALL = "bash"
# pymdownx.snippets' include line, resolved from the repository root as mkdocs.yml says
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', re.MULTILINE)
TITLE = re.compile(r'title="([^"]+)"')
# shown output lines that are exact: verdicts, messages, what was written, the closing counts
# (tables, timings and progress bars are illustrations, often with columns cut)
EXACT = re.compile(r"^(OK |Warning: |Error: |wrote |\d+ (records|prompts)\b)")
TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    language: str
    title: str | None
    text: str
    line: int


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order, snippets included."""
    found = []
    for token in MarkdownIt().parse(page.read_text(encoding="utf-8")):
        if token.type != "fence":
            continue
        language, _, attributes = token.info.partition(" ")
        title = TITLE.search(attributes)
        text = SNIPPET.sub(
            lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8").rstrip("\n"), token.content
        )
        line = token.map[0] + 1 if token.map else 0
        found.append(Block(language, title.group(1) if title else None, text, line))
    return found


def commands(text: str) -> list[tuple[str, list[str]]]:
    """A console block's commands, each with the output lines shown under it."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        elif found:
            found[-1][1].append(line)
    return found


def printed(code: str) -> list[str]:
    """What a python block says it prints: the ``# ...`` lines under (or beside) a ``print(...)``."""
    expected: list[str] = []
    after_print = False
    for line in code.splitlines():
        is_print = line.lstrip().startswith("print(")
        if is_print and "  # " in line:
            expected.append(line.split("  # ", 1)[1])
        elif line.startswith("# ") and after_print:
            expected.append(line[2:])
            continue
        after_print = is_print
    return expected


def environment() -> dict[str, str]:
    """This environment's commands first on PATH, the benchmark data where the tests read it."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ["PATH"], "PEAKOPT_SHARED": str(SHARED)}


def where(page: Path, block: Block) -> str:
    """``docs/x.md:12``, for messages."""
    return f"{page.relative_to(ROOT)}:{block.line}"


def run_console(page: Path, block: Block, cwd: Path) -> None:
    """Run each ``$`` line; check its exit code and its exact output lines."""
    for command, shown in commands(block.text):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        output = (done.stdout + done.stderr).splitlines()
        expected_code = 1 if any(line.startswith("Error: ") for line in shown) else 0
        context = f"{where(page, block)}: $ {command}\n--- stderr:\n{done.stderr[-3000:]}"
        assert done.returncode == expected_code, f"exit {done.returncode}, not {expected_code}: {context}"
        for line in shown:
            if EXACT.match(line):
                assert line in output, f"not printed: {line!r}: {context}"


def run_python(page: Path, block: Block, cwd: Path) -> None:
    """Run a python block in a fresh interpreter; check what it says it prints, in order."""
    done = subprocess.run(
        [sys.executable, "-c", block.text],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    context = f"{where(page, block)}\n--- stdout:\n{done.stdout[-2000:]}\n--- stderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"exit {done.returncode}: {context}"
    lines = iter(line.rstrip() for line in done.stdout.splitlines())
    for expected in printed(block.text):
        assert any(line == expected for line in lines), f"not printed (in order): {expected!r}: {context}"


def runs(page: Path) -> list[str]:
    """What a page runs: its commands and python blocks."""
    found = []
    for block in blocks(page):
        if block.language == "console":
            found += [command for command, _ in commands(block.text)]
        elif block.language == "python":
            found.append(block.text)
    return found


def test_every_page_has_its_examples_found() -> None:
    assert ROOT / "docs" / "index.md" in PAGES
    assert sum(len(runs(page)) for page in PAGES) >= 45
    assert len(runs(ROOT / "docs" / "getting-started.md")) >= 6
    library = [b.text for b in blocks(ROOT / "docs" / "library.md") if b.language == "python"]
    assert [line for code in library for line in printed(code)] == [
        "5.4 decide",
        "plan refunds.decide(order=$lookup_order.output",
        "0.55 False ['memory_mb 10240/8192 over [0.0, 3.2)']",
        "[0.55 0.  ] [False  True]",
        "{'source': 'llm'} 2 2 {'missing': 1, 'parse': 1}",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_block_languages_are_run_or_shown(page: Path) -> None:
    for block in blocks(page):
        if block.language == INSTALL:
            assert page.name == "README.md" and "pip install" in block.text, where(page, block)
        else:
            assert block.language in RUN + SHOWN, f"{where(page, block)}: ```{block.language}"


def run_page(page: Path, folder: Path) -> str | None:
    """Run a page's examples in a fresh folder; the first failure's message, or None."""
    (folder / "shared").symlink_to(SHARED, target_is_directory=True)
    cwd = folder / "work"
    cwd.mkdir()
    try:
        for block in blocks(page):
            if block.title:
                (cwd / block.title).write_text(block.text, encoding="utf-8")
            if block.language == "console":
                run_console(page, block, cwd)
            elif block.language == "python":
                run_python(page, block, cwd)
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        return str(failure)
    return None


@pytest.fixture(scope="session")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[Path, str | None]:
    """Each selected page's outcome; pages run side by side, as most of the time is process start-up."""
    selected = [
        item.callspec.params["page"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == "test_examples_run"
    ]
    selected.sort(key=lambda page: -len(runs(page)))  # the longest first, so that none starts last
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {page: pool.submit(run_page, page, tmp_path_factory.mktemp("page")) for page in selected}
    return {page: future.result() for page, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_examples_run(page: Path, outcomes: dict[Path, str | None]) -> None:
    assert outcomes[page] is None, outcomes[page]
