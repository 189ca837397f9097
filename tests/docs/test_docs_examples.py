"""The code examples of the README and the documentation site run as written.

Page by page, in a fresh folder, in order (a file one block writes is there for the next):
every ``$ ...`` line of a ```` ```console ```` block runs in bash with this environment's
``peakopt`` first on PATH, every ```` ```python ```` block runs in a fresh interpreter, and a
block with a ``title="FILE"`` (a JSON Lines example shown on the page) is written to FILE first.
``../shared`` is the benchmark data, as beside a checkout. What a block shows is checked where
it is exact: a command shown with an ``Error:`` line must exit 1, any other must exit 0, and its
``OK``, ``Warning:``, ``Error:``, ``wrote`` and closing-count lines must be printed word for
word; a ``# ...`` comment under a ``print(...)`` is what it prints; a block marked
``<!-- output: generated -->`` shows what its commands print, written by
docs/scripts/page_examples.py (which holds the runner) and compared whole. A block that cannot
run here is written as ```` ```text ````, never skipped: any other language fails.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from docs_scripts import page_examples
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from paths import ROOT

examples = page_examples()
Block, blocks, commands, printed = examples.Block, examples.blocks, examples.commands, examples.printed
where, environment = examples.where, examples.environment
PAGES: list[Path] = examples.PAGES
RUN = ("console", "python")
SHOWN = ("json", "toml", "text")
# the README's install-and-test lines are copied into a fresh shell, not run by a test
INSTALL = "bash"


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


# the README's commands the docs test cannot run here, and where they are run instead
NOT_RUN = {
    "inspect eval peakopt/schedule --model openai/gpt-4o -T suite=bundled:default": (
        "calls OpenAI: the benchmark page runs the same task offline (--solver peakopt/oracle)"
    ),
    "peakopt report logs/*.eval -o report.html": (
        "needs a real model's logs: the benchmark page reports on its stand-in models' logs"
    ),
    "peakopt stress bundled:default -m admission --noise 0.25 --samples 100 --db noise.sqlite": (
        "90,000 scenarios, minutes: python -m pytest benchmarks/test_noise_table.py"
    ),
}
# an argument that names something (a file, a suite, a log folder): what makes a span a command
NAMES_SOMETHING = re.compile(r"[.:/]")
# a placeholder (CMD, M, FILE) or an optional part ([--replan]): the span is a form, not a command
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z_.]*|\[.*)$")


def readme_commands() -> list[str]:
    """The README's inline commands: ``peakopt``/``inspect`` code spans naming what they run on."""
    found = []
    for token in MarkdownIt().parse((ROOT / "README.md").read_text(encoding="utf-8")):
        for child in token.children or []:
            words = child.content.split()
            if child.type != "code_inline" or not words or words[0] not in ("peakopt", "inspect"):
                continue
            arguments = words[3:] if words[0] == "inspect" else words[2:]
            if any(NAMES_SOMETHING.search(w) for w in arguments) and not any(
                PLACEHOLDER.match(w) for w in arguments
            ):
                found.append(child.content)
    return found


def run_lines() -> set[str]:
    """Every command the docs test runs, each part of a ``&&`` or ``;`` chain apart, comments cut."""
    found = set()
    for page in PAGES:
        for block in blocks(page):
            for command, _ in commands(block.text) if block.language == "console" else []:
                for part in re.split(r"&&|;", command.split("  # ")[0]):
                    found.add(" ".join(part.split()))
    return found


def test_every_command_of_the_readme_runs_in_the_docs_test() -> None:
    found = readme_commands()
    assert "peakopt solve bundled:default --robust -o robust.jsonl" in found  # the spans are read
    assert not any("CMD" in command for command in found)  # forms are not commands
    ran = run_lines()
    missing = [c for c in found if " ".join(c.split()) not in ran and c not in NOT_RUN]
    assert not missing, f"README commands no page runs (run one, or say why in NOT_RUN): {missing}"
    assert not set(NOT_RUN) - set(found), "NOT_RUN lists a command the README no longer has"


def test_generated_output_is_compared_with_its_numbers_masked_only_when_marked_so(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n<!-- output: generated -->\n\n```console\n$ echo 1\nold\n```\n\n"
        "<!-- output: generated, figures vary -->\n\n```console\n$ date +%s\n```\n\n"
        "<!-- output: generated -->\n\nA paragraph between: the mark is not the next block's.\n\n"
        "```console\n$ true\n```\n",
        encoding="utf-8",
    )
    assert [b.generated for b in blocks(page)] == ["exact", "vary", None]
    for run in ("run", "run2", "run3"):
        (tmp_path / run).mkdir()
    outputs: dict[int, str] = {}
    examples.run_page(page, tmp_path / "run", lambda _, block, text: outputs.update({block.line: text}))
    assert outputs[5] == "$ echo 1\n1\n"
    with pytest.raises(AssertionError, match="is stale"):
        examples.run_page(page, tmp_path / "run2")
    page.write_text(examples.rewrite(page, outputs), encoding="utf-8")
    examples.run_page(page, tmp_path / "run3")  # current now; the date differs, masked
    first = "<!-- output: generated -->\n\n```console\n$ echo 1\n1\n```"
    assert page.read_text(encoding="utf-8").startswith(f"Text.\n\n{first}")
    assert examples.masked(["│ a │  0.25 │", "┏━━━┳━━┓"]) == examples.masked(["│ a │ 10.5 │", "┏━┳━━━━━┓"])
    assert examples.masked(["a 1"]) != examples.masked(["b 1"])


def test_events_printed_at_the_same_time_may_come_in_either_order() -> None:
    # `peakopt run` prints two steps that end together in the order their processes are reaped
    shown = [
        "3.010s done index",
        "4.016s done embed",
        "4.017s done summarize",
        "5.024s done report",
    ]
    printed = [
        "   3.034s done index",
        "   4.050s done summarize",
        "   4.050s done embed",
        "   5.069s done report",
    ]
    assert examples.masked(examples.in_time_order(shown)) == examples.masked(examples.in_time_order(printed))
    later = [
        "   3.034s done index",
        "   5.069s done report",
        "   5.120s done embed",
        "   6.2s done summarize",
    ]
    assert examples.masked(examples.in_time_order(shown)) != examples.masked(examples.in_time_order(later))


@given(
    gaps=st.lists(st.sampled_from([0.0, 0.01, 0.2, 1.5]), min_size=1, max_size=8),
    order=st.randoms(use_true_random=False),
)
def test_only_the_order_of_events_apart_in_time_is_compared(gaps: list[float], order: Any) -> None:
    # any shape of trace: events at random gaps, simultaneous ones (gap < 50 ms) shuffled among themselves
    times = [sum(gaps[: i + 1]) for i in range(len(gaps))]
    lines = [f"{t:.3f}s done step{i}" for i, t in enumerate(times)]
    groups: list[list[str]] = []
    for i, line in enumerate(lines):
        if groups and times[i] - float(groups[-1][0].split("s ")[0]) < examples.SIMULTANEOUS:
            groups[-1].append(line)
        else:
            groups.append([line])
    shuffled = [line for group in groups for line in order.sample(group, len(group))]
    assert examples.in_time_order(shuffled) == examples.in_time_order(lines)
    apart = [i for i in range(1, len(lines)) if gaps[i] > 0.1]
    if apart:  # two events apart in time swapped: the order differs
        i = apart[0]
        swapped = [*lines[: i - 1], lines[i], lines[i - 1], *lines[i + 1 :]]
        assert examples.in_time_order(swapped) != examples.in_time_order(lines)


def run_page(page: Path, folder: Path) -> str | None:
    """Run a page's examples in a fresh folder; the first failure's message, or None."""
    try:
        examples.run_page(page, folder)
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        return str(failure)
    return None


@pytest.fixture(scope="session")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[Path, str | None]:
    """Each selected page's outcome; pages run side by side, as most of the time is process start-up."""
    selected: list[Path] = []
    for item in request.session.items:
        if isinstance(item, pytest.Function) and item.originalname == "test_examples_run":
            page = item.callspec.params["page"]
            assert isinstance(page, Path), page
            selected.append(page)
    selected.sort(key=lambda page: -len(runs(page)))  # the longest first, so that none starts last
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {page: pool.submit(run_page, page, tmp_path_factory.mktemp("page")) for page in selected}
    return {page: future.result() for page, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_examples_run(page: Path, outcomes: dict[Path, str | None]) -> None:
    assert outcomes[page] is None, outcomes[page]


def test_check_counts_a_figures_vary_block_current_when_only_its_figures_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``page_examples.py --check`` judges a "figures vary" block as the docs test does: masked."""
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- output: generated, figures vary -->\n\n"
        "```console\n$ peakopt solve x\nsolved in 1.25 s, 3 proven\n```\n",
        encoding="utf-8",
    )
    (marked,) = [b for b in blocks(page) if b.generated]

    def printing(text: str) -> Any:
        def run(_: Path, __: Path, generated: Any) -> None:
            generated(page, marked, text)

        return run

    monkeypatch.setattr(examples, "run_page", printing("$ peakopt solve x\nsolved in 0.98 s, 3 proven\n"))
    assert examples.regenerate(page, check=True)
    monkeypatch.setattr(examples, "run_page", printing("$ peakopt solve x\nsolved in 0.98 s, none proven\n"))
    assert not examples.regenerate(page, check=True)
    assert "1.25 s" in page.read_text(encoding="utf-8")  # --check writes nothing
