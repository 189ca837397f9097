"""Run the examples of the README and the site's pages, and write the outputs their marked blocks show.

Page by page, in a fresh folder, in order (a file one block writes is there for the next):
every ``$ ...`` line of a ```` ```console ```` block runs in bash with this environment's
``peakopt`` first on PATH, every ```` ```python ```` block runs in a fresh interpreter, and a
block with a ``title="FILE"`` (a JSON Lines example shown on the page) is written to FILE first.
``../shared`` is the benchmark data, as beside a checkout. tests/docs/test_docs_examples.py runs them.

A console block right after the line ``<!-- output: generated -->`` shows what its commands
print, written by this script rather than by hand: ``python docs/scripts/page_examples.py``
runs every page that has such a block and writes the output under each ``$`` line; the test
fails while a page shows anything else. ``<!-- output: generated, figures vary -->`` marks
output with timings or measurements: the test then compares it with every number masked
(the words, the columns and the lines must match; lines stamped within 50 ms of each other,
as ``peakopt run`` prints simultaneous events, in either order). Progress bars are left out,
trailing spaces stripped, and the commands print at a width of ``COLUMNS`` (100).

Usage: ``python docs/scripts/page_examples.py [--check] [PAGE.md ...]`` (default: every page
with a generated block); ``--check`` writes nothing and exits 1 when a page is stale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("PEAKOPT_SHARED", ROOT.parent / "shared"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# pymdownx.snippets' include line, resolved from the repository root as mkdocs.yml says
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', re.MULTILINE)
TITLE = re.compile(r'title="([^"]+)"')
#: The comment that marks a block whose output is generated; "figures vary" masks the numbers.
MARK = re.compile(r"^<!-- output: generated(, figures vary)? -->$")
# a rich progress bar's last state, printed when stderr is not a terminal
PROGRESS = re.compile(r"━.* \d+/\d+ ")
# shown output lines of an unmarked block that are exact: verdicts, messages, what was written,
# the closing counts (its tables and timings are illustrations)
EXACT = re.compile(r"^(OK |Warning: |Error: |wrote |\d+ (records|prompts)\b)")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
TIMEOUT = 300
COLUMNS = "100"


@dataclass(frozen=True)
class Block:
    """One fenced block of a page; ``generated`` is None, ``"exact"`` or ``"vary"``."""

    language: str
    title: str | None
    text: str
    line: int
    end: int = 0
    generated: str | None = None


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order, snippets included."""
    found = []
    mark: str | None = None
    for token in MarkdownIt().parse(page.read_text(encoding="utf-8")):
        if token.type == "html_block":
            matched = MARK.match(token.content.strip())
            mark = ("vary" if matched.group(1) else "exact") if matched else None
            continue
        if token.type != "fence":
            mark = None if token.type.endswith("_open") and token.level == 0 else mark
            continue
        language, _, attributes = token.info.partition(" ")
        title = TITLE.search(attributes)
        text = SNIPPET.sub(
            lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8").rstrip("\n"), token.content
        )
        line, end = (token.map[0] + 1, token.map[1]) if token.map else (0, 0)
        found.append(Block(language, title.group(1) if title else None, text, line, end, mark))
        mark = None
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


def environment() -> dict[str, str]:
    """The examples' environment: this Python's commands first on PATH, the benchmark data beside."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "PEAKOPT_SHARED": str(SHARED),
        "COLUMNS": COLUMNS,
    }


def name(page: Path) -> str:
    """``docs/x.md``: the page's path from the repository's root (for a page elsewhere, as given)."""
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else str(page)


def where(page: Path, block: Block) -> str:
    """``docs/x.md:12``, for messages."""
    return f"{name(page)}:{block.line}"


def shown(output: str, cwd: Path) -> list[str]:
    """The lines a generated block shows of a command's output."""
    text = output.replace(f"{cwd}{os.sep}", "").replace(str(cwd), ".")
    return [line.rstrip() for line in text.splitlines() if not PROGRESS.search(line)]


#: An Inspect log's random id in its file name, and a digest (an oracle's identity, a content hash).
LOG_ID = re.compile(r"_[A-Za-z0-9]{22}\.eval\b")
DIGEST = re.compile(r"\b[0-9a-f]{16,64}\b")


def masked(lines: list[str]) -> list[str]:
    """Lines with every number as ``N``, log ids and digests masked, and runs of spaces or rules as one.

    What varies run to run: the figures, an Inspect log's name, the oracle's identity (when its
    code changes).
    """
    found = []
    for line in lines:
        line = DIGEST.sub("HASH", LOG_ID.sub("_ID.eval", line))
        line = NUMBER.sub("N", line)
        line = re.sub(r"([━─═]+)", lambda m: m.group(1)[0], line)
        found.append(re.sub(r"\s+", " ", line).strip())
    return found


#: A line that starts with a time in seconds, as ``peakopt run`` prints its events.
STAMPED = re.compile(r"^\s*(\d+\.\d+)s (.*)$")
#: Events this close (seconds) count as simultaneous: they may print in either order.
SIMULTANEOUS = 0.05


def in_time_order(lines: list[str]) -> list[str]:
    """``lines`` with each run of simultaneous time-stamped lines sorted by what they say.

    Two steps that end together print in the order their processes happen to be reaped;
    only the order of events apart in time is part of what a page shows.
    """
    found: list[str] = []
    run: list[tuple[float, str, str]] = []
    for line in [*lines, ""]:
        stamp = STAMPED.match(line)
        if stamp and run and abs(float(stamp.group(1)) - run[0][0]) < SIMULTANEOUS:
            run.append((float(stamp.group(1)), stamp.group(2), line))
            continue
        found.extend(line for _, _, line in sorted(run, key=lambda event: event[1]))
        run = [(float(stamp.group(1)), stamp.group(2), line)] if stamp else []
        if not stamp:
            found.append(line)
    return found[:-1]


def rendered(ran: list[tuple[str, list[str]]]) -> str:
    """A console block's text: each command and what it printed."""
    return "".join(f"$ {command}\n" + "".join(f"{line}\n" for line in output) for command, output in ran)


#: Called with a marked block and what its commands printed; raises AssertionError when stale.
Generated = Callable[[Path, "Block", str], None]


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


def run_console(page: Path, block: Block, cwd: Path) -> list[tuple[str, list[str]]]:
    """Run each ``$`` line; check its exit code and its ``exact`` output lines; what each printed."""
    ran = []
    for command, expected in commands(block.text):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        output = (done.stdout + done.stderr).splitlines()
        expected_code = 1 if any(line.startswith("Error: ") for line in expected) else 0
        context = f"{where(page, block)}: $ {command}\n--- stderr:\n{done.stderr[-3000:]}"
        assert done.returncode == expected_code, f"exit {done.returncode}, not {expected_code}: {context}"
        if block.generated is None:
            for line in expected:
                if EXACT.match(line):
                    assert line in output, f"not printed: {line!r}: {context}"
        ran.append((command, shown(done.stdout + done.stderr, cwd)))
    return ran


def check_generated(page: Path, block: Block, text: str) -> None:
    """Fail when a marked block shows other than what its commands printed."""
    hint = f"{where(page, block)} is stale: run python docs/scripts/page_examples.py {name(page)}"
    if block.generated == "vary":
        shown, printed = (masked(in_time_order(t.splitlines())) for t in (block.text, text))
        assert shown == printed, f"{hint}\n--- printed:\n{text}"
    else:
        assert block.text == text, f"{hint}\n--- printed:\n{text}"


def run_python(page: Path, block: Block, cwd: Path, expected: list[str]) -> None:
    """Run a python block in a fresh interpreter; check that it prints ``expected``, in order."""
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
    for line in expected:
        assert any(printed == line for printed in lines), f"not printed (in order): {line!r}: {context}"


def run_page(page: Path, folder: Path, generated: Generated = check_generated) -> None:
    """Run a page's examples in ``folder``; ``generated`` gets each marked block's output.

    Raises
    ------
    AssertionError, subprocess.TimeoutExpired
        At the first example that fails, or the first stale block ``generated`` refuses.
    """
    (folder / "shared").symlink_to(SHARED, target_is_directory=True)
    cwd = folder / "work"
    cwd.mkdir()
    for block in blocks(page):
        if block.title:
            (cwd / block.title).write_text(block.text, encoding="utf-8")
        if block.language == "console":
            ran = run_console(page, block, cwd)
            if block.generated is not None:
                generated(page, block, rendered(ran))
        elif block.language == "python":
            run_python(page, block, cwd, printed(block.text))


def rewrite(page: Path, outputs: dict[int, str]) -> str:
    """The page's text with each marked block (by its first line) showing ``outputs``."""
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    for block in sorted((b for b in blocks(page) if b.line in outputs), key=lambda b: -b.line):
        # the fence's own lines stay; what is between them is replaced
        lines[block.line : block.end - 1] = [outputs[block.line]]
    return "".join(lines)


def regenerate(page: Path, check: bool) -> bool:
    """Run the page and write its generated blocks; whether the page was left as it was.

    With ``check`` nothing is written, and the page counts as current when the docs test would
    accept it (:func:`check_generated`: a "figures vary" block whose numbers alone differ is).
    """
    outputs: dict[int, str] = {}
    stale: list[int] = []

    def record(_: Path, block: Block, text: str) -> None:
        outputs[block.line] = text
        try:
            check_generated(page, block, text)
        except AssertionError:
            stale.append(block.line)

    with tempfile.TemporaryDirectory(prefix="peakopt-page-") as folder:
        run_page(page, Path(folder), record)
    if check:
        return not stale
    text = rewrite(page, outputs)
    if text == page.read_text(encoding="utf-8"):
        return True
    page.write_text(text, encoding="utf-8")
    return False


def main(arguments: list[str]) -> int:
    """Regenerate (or ``--check``) the pages named, or every page with a generated block."""
    check = "--check" in arguments
    named = [Path(a).resolve() for a in arguments if a != "--check"]
    pages = named or [p for p in PAGES if any(b.generated for b in blocks(p))]
    stale = [p for p in pages if not regenerate(p, check)]
    for page in stale:
        print(f"{name(page)}: {'stale' if check else 'written'}", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
