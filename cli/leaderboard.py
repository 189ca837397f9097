"""``peakopt report``'s leaderboard: the sources ranked by efficiency and their paired differences.

The figures are :func:`peakopt.oracle.leaderboard.board`'s; this module lays
them out as the terminal tables (whose cells ``--table-format`` exports) and
as the JSON document ``--json`` prints after the summaries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from rich.table import Table

from peakopt.cli.tables import stacked
from peakopt.oracle.leaderboard import Board
from peakopt.plots.columns import DIFFERENCE_COLUMNS, STANDING_COLUMNS

T = TypeVar("T")

#: The columns left-aligned (names); the others are numbers.
_NAMES = ("source", "better", "worse")


def _table(title: str, columns: Sequence[tuple[str, Callable[[T], str]]], items: Sequence[T]) -> Table:
    table = Table(title=title, title_justify="left")
    for header, cell in columns:
        if header in _NAMES:  # never cut a name to fit a narrow terminal
            table.add_column(
                header, no_wrap=True, min_width=max([len(header), *(len(cell(i)) for i in items)])
            )
        else:
            table.add_column(header, justify="right")
    for item in items:
        table.add_row(*(stacked(cell(item)) for _, cell in columns))
    return table


def board_tables(board: Board) -> list[Table]:
    """The leaderboard and the paired differences (none with fewer than two sources)."""
    if len(board.standings) < 2:
        return []
    return [
        _table("leaderboard (mean efficiency, 95 % CI)", STANDING_COLUMNS, board.standings),
        _table("paired differences (common pairs, 95 % CI)", DIFFERENCE_COLUMNS, board.differences),
    ]


def board_json(board: Board) -> str:
    """The leaderboard as one JSON document (one line), '' with fewer than two sources."""
    if len(board.standings) < 2:
        return ""
    return json.dumps(board.model_dump(mode="json")) + "\n"
