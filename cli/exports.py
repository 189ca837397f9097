"""Tables as Markdown or LaTeX on stdout (``--table-format md|latex``), for a paper or a README.

(``--format`` is taken: on ``score`` and ``plan-score`` it names the input format, and one
option name keeps one meaning across the commands.)

An exported table is the terminal table itself, read back cell by cell (its
rich :class:`~rich.table.Table`), so the two always have the same columns,
headers and cell texts; only the markup differs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.cli.tables import show

if TYPE_CHECKING:
    from rich.table import Table  # the tables come built: rich is not imported to declare the options

F = TypeVar("F", bound=Callable[..., Any])

#: The ``--table-format`` choices: every table as Markdown or LaTeX, or the summary alone for a paper.
TABLE_FORMATS = ("md", "latex", "latex-paper")
# LaTeX's special characters in text mode and what typesets each as itself.
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # OT1, LaTeX's default font encoding, sets these three as other glyphs (¡, ¿, —)
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def cells(table: Table) -> tuple[list[str], list[bool], list[list[str]]]:
    """A table's headers, which columns are right-aligned, and its rows of cell texts."""
    headers = [str(column.header) for column in table.columns]
    right = [column.justify == "right" for column in table.columns]
    # a terminal cell stacks a mean over its interval: one line again here
    columns = [[" ".join(str(cell).splitlines()) for cell in column.cells] for column in table.columns]
    return headers, right, [list(row) for row in zip(*columns, strict=True)]


#: What Markdown would read as formatting in a cell: emphasis, code, a cell's end (escaped with a
#: backslash), and HTML and entities (written as entities, which every Markdown reads).
_MARKDOWN = {
    **{char: "\\" + char for char in "\\`*_|"},
    **{"&": "&amp;", "<": "&lt;", ">": "&gt;"},
}


def markdown_text(text: str) -> str:
    r"""``text`` shown literally in Markdown: ``a_b*`` is ``a\_b\*``, ``<b>`` is ``&lt;b&gt;``.

    Names come from users' files; a link ``[x](y)`` is broken at ``](`` (an interval's brackets,
    ``[0.880, 0.940]``, are not a link and stay as they are).
    """
    return "".join(_MARKDOWN.get(char, char) for char in text).replace("](", "]\\(")


def _markdown_cell(text: str) -> str:
    return markdown_text(text) or " "


def markdown(table: Table) -> str:
    """A Markdown pipe table (GitHub's and MkDocs' syntax): its title a bold line above, its caption below."""
    headers, right, rows = cells(table)
    lines = [f"**{markdown_text(str(table.title))}**", ""] if table.title else []
    lines.append("| " + " | ".join(_markdown_cell(h) for h in headers) + " |")
    lines.append("|" + "|".join("---:" if r else ":---" for r in right) + "|")
    lines += ["| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in rows]
    if table.caption:
        lines += ["", markdown_text(str(table.caption))]  # what the table shows: never left out
    return "\n".join(lines) + "\n"


def latex_text(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped (``5%`` is ``5\%``, ``a_b`` is ``a\_b``)."""
    return "".join(_LATEX.get(char, char) for char in text)


def _latex_row(texts: Sequence[str]) -> str:
    # a row opening with "[" would be read as the optional argument of the \\ or \midrule before it
    line = " & ".join(latex_text(text) for text in texts)
    return ("{}" if line.startswith("[") else "") + line + " \\\\"


def latex(table: Table) -> str:
    """A LaTeX ``tabular`` (booktabs rules), its title as a comment line above it, its caption below."""
    headers, right, rows = cells(table)
    lines = [f"% {latex_text(str(table.title))}"] if table.title else []
    lines.append("\\begin{tabular}{" + "".join("r" if r else "l" for r in right) + "}")
    lines.append("\\toprule")
    lines.append(_latex_row(headers))
    lines.append("\\midrule")
    lines += [_latex_row(row) for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    if table.caption:
        lines.append(f"% {latex_text(str(table.caption))}")
    return "\n".join(lines) + "\n"


#: The paper table's note, a comment line under its title.
PAPER_NOTE = "% a mean's 95 % bootstrap interval (seeded) in brackets; needs \\usepackage{booktabs}"


def latex_paper(table: Table) -> str:
    r"""The summary table as a paper prints it: one booktabs ``tabular``, no space outside its columns.

    The table's own columns (the headline ones unless ``--wide`` or ``--columns`` chose others),
    one line per group, a mean and its interval in one cell (``0.912 [0.880, 0.940]``), a column
    of percentages with its ``(%)`` in the header instead of in every cell, names escaped; the
    title and a note as comment lines above it, for a ``table`` float of the paper's own
    (caption, label) to ``\input``.
    """
    headers, right, rows = cells(table)
    for index, column in enumerate(zip(*rows, strict=True) if rows else ()):
        if _percentages(column):
            headers[index] += " (%)"
            for row in rows:
                row[index] = row[index].replace("%", "")
    spec = "".join("r" if r else "l" for r in right)
    lines = [f"% {latex_text(str(table.title))}"] if table.title else []
    lines += [PAPER_NOTE, "\\begin{tabular}{@{}" + spec + "@{}}", "\\toprule", _latex_row(headers)]
    lines += ["\\midrule", *(_latex_row(row) for row in rows), "\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


# a cell of percentages: "75.0%", "-2.5% [-5.0%, +1.0%]"; or a column's words for no figure
_PERCENT = re.compile(r"[+-]?\d+(\.\d+)?%( \[[+-]?\d+(\.\d+)?%, [+-]?\d+(\.\d+)?%\])?")


def _percentages(column: Sequence[str]) -> bool:
    """Whether a column holds percentages only (and the words that stand for no figure)."""
    figures = [text for text in column if text not in ("-", "unsafe", "invalid")]
    return bool(figures) and all(_PERCENT.fullmatch(text) for text in figures)


def format_option(func: F) -> F:
    """``--table-format md|latex|latex-paper``: print tables on stdout in that markup, not on stderr."""
    return click.option(
        "--table-format",
        "table_format",
        type=click.Choice(TABLE_FORMATS),
        help="Print the tables on stdout as Markdown (md) or LaTeX tabulars (latex), the terminal "
        "tables' columns, instead of on stderr; latex-paper: the summary table alone, for a paper "
        "(booktabs; the headline columns unless --wide or --columns).",
    )(func)


def check_export(table_format: str | None, as_json: bool, as_csv: bool) -> None:
    """A usage error for ``--table-format`` with ``--json`` or ``--csv``: both would print on stdout."""
    if table_format and (as_json or as_csv):
        raise click.UsageError("--table-format and --json/--csv are exclusive (each prints on stdout)")


def show_tables(table_format: str | None, tables: Sequence[Table], summary: Table | None = None) -> None:
    """The tables on stdout in ``table_format`` (blank-line separated), or on stderr without one.

    ``latex-paper`` prints the ``summary`` table alone (the first of ``tables`` when None).
    """
    if table_format is None:
        show(*tables)
        return
    if table_format == "latex-paper":
        click.echo(latex_paper(summary if summary is not None else tables[0]), nl=False)
        return
    render = markdown if table_format == "md" else latex
    click.echo("\n".join(render(table) for table in tables), nl=False)
