"""A table of text cells: what the report's provenance and floor tables hold, in any output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Cells:
    """Lines of text cells under a caption; each line maps a header to its cell.

    Attributes
    ----------
    caption
        One sentence saying what the table shows.
    lines
        The lines, in order; the first line's keys are the headers.
    """

    caption: str
    lines: Sequence[Mapping[str, str]]

    @property
    def headers(self) -> list[str]:
        """The headers: the first line's keys (none without lines)."""
        return list(self.lines[0]) if self.lines else []
