"""JSON text as a sequence of documents, each named by the line it starts on.

Every reader of JSON input goes through here, so that they all accept the
same things and refuse them with the same words:

- one document, or several one after another: JSON Lines (one per line) or
  pretty-printed documents concatenated in one file, read in turn
  (:meth:`json.JSONDecoder.raw_decode`);
- a document nested more than :data:`MAX_DEPTH` levels deep is refused as
  ``JSON nested too deeply``. Python's own limit (the recursion limit) is
  higher, but pydantic refuses to serialise past 255 levels and the standard
  library's encoder past the recursion limit, so a document that deep would
  be read and then break whatever writes it out again.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peakopt.instances.errors import InputError

#: Deepest nesting of arrays and objects a document may have.
MAX_DEPTH = 100

TOO_DEEP = f"JSON nested too deeply (more than {MAX_DEPTH} levels)"

_DECODER = json.JSONDecoder()
_DIGITS_READ = sys.get_int_max_str_digits() or 4300
_CONTAINERS = (dict, list)  # what json decodes arrays and objects to, exactly
_BLANK = re.compile(r"[ \t\r\n]*")


@dataclass(frozen=True)
class Document:
    """One JSON document of a text, or why the text at that place is not one.

    Attributes
    ----------
    line
        1-based line on which the document starts.
    data
        The decoded value (None when ``error`` is set).
    error
        The broken rule, without the line (the caller names the line once).
    """

    line: int
    data: Any = None
    error: str | None = None


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether decoded JSON ``value`` nests lists and dicts more than ``limit`` levels deep.

    Walks level by level with a list, not recursively: a recursive walk
    would itself hit the recursion limit on the documents it is meant to
    refuse (and a 10,000-task workflow is walked in about 15 ms).
    """
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            below.extend([child for child in children if type(child) in _CONTAINERS])
        level = below
    return False


def documents(text: str) -> Iterator[Document]:
    """Every JSON document of ``text`` in turn; never raises.

    A stretch that is not valid JSON becomes a :class:`Document` with an
    ``error`` and reading resumes on the next line, so that one torn line of
    a JSON Lines file does not hide the lines after it.
    """
    position, line = 0, 1
    while True:
        start = _skip_blank(text, position)
        line += text.count("\n", position, start)
        if start == len(text):
            return
        try:
            data, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            where = f"column {exc.colno}" if exc.lineno == line else f"line {exc.lineno} column {exc.colno}"
            yield Document(line, error=f"not valid JSON: {exc.msg} at {where}")
            end = _next_line(text, start)
        except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
            yield Document(line, error=f"not readable JSON: a number has over {_DIGITS_READ} digits")
            end = _next_line(text, start)
        except RecursionError:
            yield Document(line, error=TOO_DEEP)
            end = _next_line(text, start)
        else:
            yield Document(line, error=TOO_DEEP) if too_deep(data) else Document(line, data)
        line += text.count("\n", start, end)
        position = end


def decode_all(text: str, source: str | Path, *, by_line: bool = False) -> list[Document]:
    """The documents of ``text``; the first bad one is an :class:`InputError`.

    Parameters
    ----------
    text
        The file's text.
    source
        The file, for the error.
    by_line
        Name every document by its line in errors (JSON Lines). Otherwise a
        lone document is named by the file alone.

    Raises
    ------
    InputError
        Naming the line of the first document that is not valid JSON or is
        nested too deeply, or saying that the text holds no document.
    """
    found: list[Document] = []
    for document in documents(text):
        if document.error is not None:
            if by_line or found:
                raise InputError(source, f"line {document.line}", document.error)
            # the first document of a plain JSON file: the file names it, the rule gives the place
            raise InputError(source, "", _absolute(document))
        found.append(document)
    if not found:
        raise InputError(source, "", "holds no JSON document")
    return found


def decode_one(text: str, source: str | Path) -> Any:
    """The single JSON document of ``text`` (a catalog, a machine file).

    Raises
    ------
    InputError
        When it is not valid JSON, is nested too deeply, or holds several
        documents.
    """
    found = decode_all(text, source)
    if len(found) > 1:
        raise InputError(
            source, f"line {found[1].line}", "a second JSON document; this file holds exactly one"
        )
    return found[0].data


def _absolute(document: Document) -> str:
    """The error of a document named by the file alone: its position as ``line L column C``."""
    error = document.error or ""
    if " at column " in error:
        return error.replace(" at column ", f" at line {document.line} column ")
    return error


def _skip_blank(text: str, position: int) -> int:
    match = _BLANK.match(text, position)
    return match.end() if match else position


def _next_line(text: str, position: int) -> int:
    found = text.find("\n", position)
    return len(text) if found < 0 else found + 1
