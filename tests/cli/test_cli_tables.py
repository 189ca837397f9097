"""Summary tables that fit: the headline columns, --wide and --columns, widths, nothing cut, LaTeX.

The terminal tables are captured in a real pseudo-terminal of 80, 120 and 200 columns, and on a
pipe with and without COLUMNS; what each shows is read back column by column and compared with
the same table printed wide enough for every cell, so a cell that lost a character is caught,
not only one cut to ``…``.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from peakopt.cli.main import cli
from peakopt.cli.messages import PIPED_WIDTH
from peakopt.cli.widths import fit, widths
from peakopt.plots.columns import HEADLINE, MONTE_CARLO_HEADLINE, column_key, headline, summary_columns

#: Every summary column of ``score`` with references, and of ``report``: 17 with the group's.
SCORE_WIDE = 17

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A small generated suite (4 workflows × 3 machines), its optima, asap and serial scored."""
    tmp = tmp_path_factory.mktemp("tables")
    paths = {name: str(tmp / name) for name in ("suite.json", "refs.jsonl", "sch.jsonl", "scores.jsonl")}
    steps = [
        ("generate", "--easy", "4", "--medium", "0", "--hard", "0", "-o", paths["suite.json"]),
        ("solve", paths["suite.json"], "-j", "1", "-o", paths["refs.jsonl"]),
        ("schedule", paths["suite.json"], "-m", "asap,serial", "-o", paths["sch.jsonl"]),
    ]
    for step in steps:
        code, _, err = run(*step, "-q")
        assert code == 0, err
    code, _, err = run(*score_args(paths), "-o", paths["scores.jsonl"], "-q")
    assert code == 0, err
    return paths


def score_args(paths: dict[str, str]) -> list[str]:
    return ["score", paths["suite.json"], "-s", paths["sch.jsonl"], "-r", paths["refs.jsonl"]]


def environment(**extra: str) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return {**found, **extra}


def in_terminal(args: list[str], columns: int) -> str:
    """What ``peakopt ARGS`` prints in a pseudo-terminal ``columns`` wide (no COLUMNS set)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    command = [sys.executable, "-m", "peakopt.cli", *args]
    process = subprocess.Popen(
        command, stdin=follower, stdout=follower, stderr=follower, env=environment(TERM="xterm")
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


def piped(args: list[str], **extra: str) -> str:
    """stderr of ``peakopt ARGS`` on a pipe."""
    command = [sys.executable, "-m", "peakopt.cli", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=environment(**extra), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr


def summary_lines(text: str) -> list[str]:
    """The lines of the first table whose header holds a ``group`` or ``source`` column."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("└"))
    return lines[start : end + 1]


def columns_of(table: list[str]) -> tuple[list[str], list[str]]:
    """Each column's header and body text, its lines joined without spaces (folds undone)."""
    heads: list[list[str]] = []
    bodies: list[list[str]] = []
    for line in table:
        if line.startswith("┃"):
            for index, piece in enumerate(line.strip("┃").split("┃")):
                (heads.append([]) if index == len(heads) else None)
                heads[index].append(piece)
        elif line.startswith("│"):
            for index, piece in enumerate(line.strip("│").split("│")):
                (bodies.append([]) if index == len(bodies) else None)
                bodies[index].append(piece)
    joined = ["".join("".join(pieces).split()) for pieces in heads]
    return joined, ["".join("".join(pieces).split()) for pieces in bodies]


HEADERS = ["group", "efficiency", "rows", "invalid", "safe", "avoidable cva", "gap mean", "invalid reasons"]


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_a_terminal_shows_the_headline_whole(scored: dict[str, str], columns: int) -> None:
    shown = in_terminal(score_args(scored), columns)
    assert "…" not in shown
    table = summary_lines(shown)
    assert all(cell_len(line) <= columns for line in table)
    heads, bodies = columns_of(table)
    assert heads == [h.replace(" ", "") for h in HEADERS]
    # the same cells, character for character, as the table printed wide enough for all of them
    whole = columns_of(summary_lines(piped(score_args(scored), COLUMNS="300")))
    assert (heads, bodies) == whole
    assert re.search(r"0\.\d{3}\[0\.\d{3},[01]\.\d{3}\]", bodies[1])  # an interval, whole


def test_a_pipe_honours_columns(scored: dict[str, str]) -> None:
    for extra in ([], ["--wide"]):
        shown = piped([*score_args(scored), *extra], COLUMNS="100")
        table = summary_lines(shown)
        assert max(cell_len(line) for line in shown.splitlines()) <= 100
        assert "…" not in shown
        assert columns_of(table) == columns_of(summary_lines(piped([*score_args(scored), *extra])))
    # without COLUMNS a pipe is PIPED_WIDTH wide: the wide table keeps every line whole
    wide = summary_lines(piped([*score_args(scored), "--wide"]))
    assert cell_len(wide[0]) <= PIPED_WIDTH and len(columns_of(wide)[0]) == SCORE_WIDE
    assert sum(line.startswith("│") for line in wide) == 4  # 2 groups, a mean over its interval


def _markdown_header(out: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith("| "))
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_wide_shows_every_column_and_columns_names_them(scored: dict[str, str]) -> None:
    code, out, err = run(*score_args(scored), "--wide", "--table-format", "md", "-q")
    assert code == 0, err
    assert len(_markdown_header(out)) == SCORE_WIDE
    code, out, err = run("report", scored["scores.jsonl"], "--wide", "--table-format", "md")
    assert code == 0, err
    summary = out.split("\n\n")[-1] if "leaderboard" not in out else out.split("**peakopt report")[1]
    assert len(_markdown_header(summary)) == SCORE_WIDE
    code, out, err = run(*score_args(scored), "--columns", "GAP_MAX,avoidable-cva", "--table-format", "md")
    assert code == 0, err
    assert _markdown_header(out) == ["group", "gap max", "avoidable cva"]


def test_an_unknown_column_is_a_usage_error_naming_the_valid_ones(scored: dict[str, str]) -> None:
    code, out, err = run(*score_args(scored), "--columns", "efficiency,speed")
    assert code == 2 and out == ""
    assert "unknown column 'speed'; choose from: efficiency, rows, invalid, safe, makespan" in err
    assert "gap vs LB max, invalid reasons" in err
    code, _, err = run("report", scored["scores.jsonl"], "--columns", "invalid reasons")
    assert code == 2 and "errors" in err  # report's own columns
    code, _, err = run(*score_args(scored), "--wide", "--columns", "cva")
    assert code == 2 and "--wide and --columns are exclusive" in err


def test_the_headline_is_one_definition() -> None:
    names = [column_key(h) for h, _ in headline(summary_columns(gaps=True, failed="error"))]
    assert names == [n for n in HEADLINE if n != "invalid reasons"]
    # without an optimum, the mean makespan stands in for efficiency and gap
    assert [h for h, _ in headline(summary_columns(gaps=False))] == [
        "rows",
        "invalid",
        "safe",
        "makespan",
        "avoidable cva",
    ]


def test_the_html_summary_shows_the_headline(scored: dict[str, str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    page = tmp_path / "r.html"
    assert run("report", scored["scores.jsonl"], "-o", str(page), "-q")[0] == 0
    head = re.search(r'<table id="summary"><thead><tr>(.*?)</tr>', page.read_text())
    assert head is not None
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head.group(1)) == [
        "source",
        *(n for n in HEADLINE if n != "invalid reasons"),
    ]
    assert run("report", scored["scores.jsonl"], "-o", str(page), "-q", "--wide")[0] == 0
    assert page.read_text().count("<th>gap vs LB max</th>") >= 1


def test_widths_keep_words_whole_where_they_fit() -> None:
    assert widths([3, 5], [10, 20], 100) == [10, 20]
    # the column needing least to be whole gets it first, the other wraps
    assert widths([3, 5], [10, 20], 20) == [10, 10]
    # not even the longest words fit: the widest is narrowed to one level
    assert widths([3, 10], [3, 10], 9) == [3, 6]


@pytest.mark.parametrize("width", [20, 40, 80])
def test_nothing_is_cut_however_narrow(width: int) -> None:
    table = Table(title="t")
    name = "a-very-long-model-name-with-no-space-in-it/2026-12-03"
    for header in ("source", "efficiency", "avoidable cva"):
        table.add_column(header, no_wrap=header == "source", min_width=40 if header == "source" else None)
    table.add_row(name, "0.912\n[0.880, 0.940]", "1.000")
    out = StringIO()
    Console(file=out, width=width, color_system=None).print(fit(table, width))
    text = out.getvalue()
    assert "…" not in text
    assert all(cell_len(line) <= width for line in text.splitlines())
    assert name in "".join("".join(line.strip("│").split("│")[0].split()) for line in text.splitlines())


@pytest.fixture
def odd_names(tmp_path: Path, scored: dict[str, str]) -> str:
    """The scores with their sources renamed after LaTeX's special characters."""
    names = {"asap": "my_model&co", "serial": "[x]<y>|z"}
    rows = [json.loads(line) for line in Path(scored["scores.jsonl"]).read_text().splitlines()]
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps({**r, "source": names[r["source"]]}) + "\n" for r in rows))
    return str(path)


def test_the_paper_table(odd_names: str) -> None:
    code, out, err = run("report", odd_names, "--table-format", "latex-paper")
    assert code == 0, err
    assert out.count(r"\begin{tabular}") == 1  # the summary alone
    body = [line for line in out.splitlines() if line.endswith(r"\\")]
    assert [line for line in out.splitlines() if line in (r"\toprule", r"\midrule", r"\bottomrule")] == [
        r"\toprule",
        r"\midrule",
        r"\bottomrule",
    ]
    header, *rows = body
    assert header.startswith("source & efficiency & rows & errors & invalid & safe (\\%) &")
    assert len(rows) == 2  # one line per method
    assert any(row.startswith(r"my\_model\&co & ") for row in rows)
    assert any(row.startswith(r"{}[x]\textless{}y\textgreater{}\textbar{}z & ") for row in rows)
    for row in rows:
        assert re.search(r" & \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] & ", row)  # 0.912 [0.880, 0.940]
        assert "%" not in row.replace(r"\%", "")  # percentages carry theirs in the header


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex (.ci/run installs TeX Live)")
@pytest.mark.parametrize("extra", [["--table-format", "latex-paper"], ["--table-format", "latex", "--wide"]])
def test_the_latex_compiles(odd_names: str, tmp_path: Path, extra: list[str]) -> None:
    code, out, err = run("report", odd_names, *extra)
    assert code == 0, err
    document = tmp_path / "t.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + out.replace(r"\end{tabular}", "\\end{tabular}\n\n")
        + "\\end{document}\n"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", document.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0


def _markdown_headers(out: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in out.splitlines()
        if line.startswith("| g")
    ]


def test_the_monte_carlo_table_has_a_headline_and_wide_shows_the_rest(scored: dict[str, str]) -> None:
    args = [*score_args(scored), "--samples", "20", "--table-format", "md", "-q"]
    code, out, err = run(*args)
    assert code == 0, err
    summary, sampled = _markdown_headers(out)
    assert sampled == ["group", *MONTE_CARLO_HEADLINE]
    code, out, err = run(*args, "--wide")
    assert code == 0, err
    summary, sampled = _markdown_headers(out)
    assert len(summary) == SCORE_WIDE
    assert sampled[0] == "group" and set(MONTE_CARLO_HEADLINE) < set(sampled)
    assert {"rows", "dependency broken", "mean avoidable cva"} <= set(sampled) - set(MONTE_CARLO_HEADLINE)
    # --columns names the summary's columns; the Monte Carlo table keeps its headline
    code, out, err = run(*args, "--columns", "safe")
    assert code == 0, err
    assert _markdown_headers(out) == [["group", "safe"], ["group", *MONTE_CARLO_HEADLINE]]
