"""Reading the HTML report back in the report's tests: its tables' header cells and rows, by id."""

from __future__ import annotations

from html.parser import HTMLParser


class Tables(HTMLParser):
    """The header cells and body rows of every table, by id."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: dict[str, list[str]] = {}
        self.rows: dict[str, list[list[str]]] = {}
        self.table: str | None = None
        self.cell: str | None = None
        self.head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.table = dict(attrs).get("id") or ""
            self.heads[self.table], self.rows[self.table] = [], []
        elif tag == "tr" and self.table is not None and not self.head:
            self.rows[self.table].append([])
        elif tag == "thead":
            self.head = True
        elif tag in ("th", "td"):
            self.cell = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self.table is not None and self.cell is not None:
            target = self.heads[self.table] if self.head else self.rows[self.table][-1]
            target.append(self.cell)
            self.cell = None
        elif tag == "thead":
            self.head = False
        elif tag == "table":
            self.table = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell += data


def parse(page: str) -> Tables:
    """The tables of an HTML page."""
    tables = Tables()
    tables.feed(page)
    return tables
