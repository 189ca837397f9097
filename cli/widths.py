"""Tables fitted to the console's width without cutting a cell: words kept whole where they fit.

rich squeezes a table that is wider than the console by narrowing its widest columns evenly,
and then cuts what no longer fits with ``…`` (or with no mark at all in a column that may not
wrap). Here every column folds instead, so every character of every cell and header is printed,
and a table too wide is given column widths that keep its words whole where they fit: the
narrow columns first get all they need, the wide ones wrap at spaces (an interval ``[0.500,
1.000]`` onto two lines) rather than mid-number (see :func:`widths`).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.table import Table


def _texts(table: Table, index: int) -> Iterable[str]:
    column = table.columns[index]
    yield str(column.header)
    yield from (str(cell) for cell in column.cells)


def _span(texts: Iterable[str]) -> tuple[int, int]:
    """The longest word and the longest line of ``texts`` (terminal cells)."""
    words = lines = 0
    for text in texts:
        for line in text.splitlines() or [""]:
            lines = max(lines, cell_len(line))
            words = max(words, *(cell_len(word) for word in line.split() or [""]))
    return words, lines


def widths(least: list[int], most: list[int], room: int) -> list[int]:
    """Column widths between ``least`` and ``most`` that sum to at most ``room`` where they can.

    The columns that need the least to be whole get it first: many narrow columns kept whole and
    a few wide ones wrapped read better than every column wrapped. When even the longest words
    do not fit side by side, the widest columns are narrowed to one level (a word of theirs is
    then folded onto two lines), the others keep theirs; each column keeps at least 1.
    """
    level = max([*least, 1])
    while level > 1 and sum(min(w, level) for w in least) > room:
        level -= 1
    found = [min(w, level) for w in least]
    spare = room - sum(found)
    for index in sorted(range(len(found)), key=lambda i: most[i] - found[i]):
        grant = max(0, min(most[index] - found[index], spare))
        found[index] += grant
        spare -= grant
    return found


def fit(table: Table, width: int) -> Table:
    """``table`` made to fit ``width`` terminal cells with nothing cut (see the module's note)."""
    for column in table.columns:
        column.no_wrap = False
        column.overflow = "fold"
        column.min_width = None  # a column held wider than its share would push the table off the edge
        column.width = None
    spans = [_span(_texts(table, index)) for index in range(len(table.columns))]
    # what a row takes besides its cells: each column's padding and the box's vertical lines
    padding = sum(table._get_padding_width(index) for index in range(len(table.columns)))
    chosen = widths([s[0] for s in spans], [s[1] for s in spans], width - padding - table._extra_width)
    if sum(chosen) < sum(s[1] for s in spans):  # only a table too wide for its lines
        for column, found in zip(table.columns, chosen, strict=True):
            column.width = found
    return table
