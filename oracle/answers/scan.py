"""One linear pass over an LLM's text: its JSON-looking spans, each with the spans inside it.

The scan reads the text once, left to right, with a stack of open brackets,
and keeps the spans that can hold an answer:

- a span opens *like JSON*: ``{`` followed by a quote, ``}`` or a key and a
  colon; ``[`` followed by a quote, a bracket, or a number or literal that
  is followed by ``,`` or ``]``. Citations (``[1]``), links
  (``[text](url)``), prose in brackets (``[1-3]``, ``[see below]``) and
  stray braces are not, so that nothing in the prose hides the answer after it;
- it can hold a mapping or a pair (a colon or a nested bracket): ``[1]`` or
  ``["a", "b"]`` cannot be a schedule or a dependency structure;
- strings and comments count only inside a JSON-looking span (an apostrophe
  in prose opens no string); a string ends at the end of its line at the
  latest; a single quote opens one only where a value can start;
- a closing bracket that does not match closes the nearest open bracket it
  matches, abandoning those in between; one that matches none is prose, and
  so is every bracket outside JSON-looking spans that does not open one;
- a span nested deeper than :data:`MAX_SPAN_DEPTH` is skipped: no answer is;
- the outermost JSON-looking span still open at the end of the text is
  *truncated*: it comes with the brackets that would close it.

Every character is looked at a bounded number of times: a span with no
bracket, single quote or comment inside (most are) is matched by one regular
expression, the rest token by token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat

#: Spans nested deeper than this are skipped: no schedule is, and json-repair recurses on them.
MAX_SPAN_DEPTH = 64

_OPENERS = re.compile(r"[\[{]+")
_BRACKETS = re.compile(r"[\[{]+|[\]}]")
_TOKENS = re.compile(r"""[\[{]+|[\]}"':/#]""")
_STRING = {q: re.compile(q + r"(?:[^" + q + r"\\\n]|\\[^\n])*(?:" + q + r"|(?=\n)|\Z)") for q in "\"'"}
_VALUE_BEFORE = re.compile(r"[{\[,:]\s*+\Z")
_OBJECT_START = re.compile(r"""\s*(?:["'}/#]|[A-Za-z_$][\w$\-.]*\s*:|\d+\s*:)""")
_SCALAR = r"(?:[-+]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][-+]?+\d++)?+|true|false|null|NaN|-?Infinity)"
_ARRAY_START = re.compile(r"""\s*(?:["'{\[\]]|/[/*]|""" + _SCALAR + r"""\s*(?:[,\]]|\Z))""")
#: A span with no bracket, single quote or comment inside: scanned by one match.
_LEAF = re.compile(r"""[\[{](?:[^\[\]{}"'/#]++|"(?:[^"\\\n]|\\[^\n])*+")*+[\]}]""")
_LEAF_KEY = re.compile(r"""[{,]\s*"((?:[^"\\\n]|\\[^\n])*)"\s*:""")
_CLOSE = {"{": "}", "[": "]"}
_NONE: frozenset[str] = frozenset()


@dataclass(slots=True)
class Span:
    """A JSON-looking span of the text.

    Attributes
    ----------
    start, end
        Where it lies (``end`` is the text's length for a truncated span).
    duplicates
        Keys that one of its objects gives twice.
    closers
        What would close it, for a truncated span (else empty).
    inner
        The spans directly inside it, in text order.
    cut_string
        Where the string the text ends in opens, for a truncated span cut inside one.
    """

    start: int
    end: int
    duplicates: frozenset[str] = _NONE
    closers: str = ""
    inner: Sequence[Span] = ()
    cut_string: int | None = None


def _json_like(text: str, start: int, char: str) -> bool:
    """Whether the bracket at ``start`` opens like JSON."""
    return (_OBJECT_START if char == "{" else _ARRAY_START).match(text, start + 1) is not None


def _repeated(keys: list[str]) -> frozenset[str]:
    return frozenset(k for k in keys if keys.count(k) > 1) if len(set(keys)) < len(keys) else _NONE


class _Scan:
    """The state of one pass: the open brackets and the spans found so far (the outermost ones).

    The open brackets are parallel lists (a scan may open one per character,
    so each is a few list operations); a span that closes takes the spans
    kept since it opened as its inner ones.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts: list[int] = []
        self.chars: list[str] = []
        self.marks: list[int] = []  # how many outermost spans there were when it opened
        self.structure: list[bool] = []  # a colon or a nested bracket inside
        self.depth: list[int] = []  # deepest nesting inside
        self.json: list[bool | None] = []  # opens like JSON (found out when first needed)
        self.keys: dict[int, set[str]] = {}  # by level: the keys an object gives
        self.duplicates: dict[int, set[str]] = {}  # by level: keys given twice (its own and inside)
        self.spans: list[Span] = []
        self.open = {"{": 0, "[": 0}
        self.key: tuple[int, str] | None = None  # end and text of the last string: a key if a colon follows
        self.cut_string: int | None = None  # the last string, if the text ends in it
        self.comment_end = -1  # where the next "*/" is, so that each is searched for once

    def top_is_json(self) -> bool:
        found = self.json[-1]
        if found is None:
            found = self.json[-1] = _json_like(self.text, self.starts[-1], self.chars[-1])
        return found

    def push(self, start: int, run: str) -> None:
        count = len(run)
        if self.starts:
            self.structure[-1] = True
        if count == 1:  # the common case, in a few appends
            self.starts.append(start)
            self.chars.append(run)
            self.marks.append(len(self.spans))
            self.structure.append(False)
            self.depth.append(0)
            self.json.append(None)
            self.open[run] += 1
            return
        self.starts.extend(range(start, start + count))
        self.chars.extend(run)
        self.marks.extend(repeat(len(self.spans), count))
        self.structure.extend(repeat(True, count - 1))
        self.structure.append(False)
        self.depth.extend(repeat(0, count))
        # a bracket followed by another opens like JSON if it is a "[" ("[{", "[["), never if a "{"
        self.json.extend(c == "[" for c in run[:-1])
        self.json.append(None)
        braces = run.count("{")
        self.open["{"] += braces
        self.open["["] += count - braces

    def _child(self, depth: int, duplicates: frozenset[str] | set[str] | None) -> None:
        """The top frame learns of a child span: it holds a structure, this deep, with these duplicates."""
        self.structure[-1] = True
        if depth >= self.depth[-1]:
            self.depth[-1] = depth + 1
        if duplicates:
            self.duplicates.setdefault(len(self.starts) - 1, set()).update(duplicates)

    def pop(self, end: int | None) -> None:
        """Drop the top frame; keep its span if it closed at ``end`` and can hold an answer."""
        level = len(self.starts) - 1
        usable = (
            end is not None and self.structure[-1] and self.depth[-1] < MAX_SPAN_DEPTH and self.top_is_json()
        )
        start, mark, depth = self.starts.pop(), self.marks.pop(), self.depth.pop()
        self.open[self.chars.pop()] -= 1
        self.structure.pop()
        self.json.pop()
        duplicates = self.duplicates.pop(level, None) if self.duplicates else None
        if self.keys:
            self.keys.pop(level, None)
        if self.starts:
            self._child(depth, duplicates)
        if usable:
            assert end is not None
            self._keep(mark, Span(start, end, frozenset(duplicates) if duplicates else _NONE))

    def _keep(self, mark: int, span: Span) -> None:
        span.inner = self.spans[mark:]
        del self.spans[mark:]
        self.spans.append(span)

    def add_key(self, name: str) -> None:
        level = len(self.starts) - 1
        keys = self.keys.setdefault(level, set())
        if name in keys:
            self.duplicates.setdefault(level, set()).add(name)
        keys.add(name)

    def leaf(self, start: int, body: str) -> None:
        """A span with no bracket, single quote or comment inside: opened and closed at once."""
        usable = ":" in body and _json_like(self.text, start, body[0])
        duplicates = _repeated(_LEAF_KEY.findall(body)) if usable and body.count(":") > 1 else _NONE
        if self.starts:
            self._child(0, duplicates)
        if usable:
            self.spans.append(Span(start, start + len(body), duplicates))

    def run(self) -> list[Span]:
        """Scan the whole text; the outermost spans kept."""
        text, i, search = self.text, 0, _OPENERS.search
        while (match := search(text, i)) is not None:
            j = match.start()
            if text[j] in "{[":
                i = self._open(match)
            elif text[j] in "}]":
                i = j + 1
                if not self._close(j, text[j]):
                    continue  # a closing bracket of prose: nothing changed
            else:
                i = self._token(j, text[j])
                continue  # the same bracket is open: the same tokens count
            self.key = None
            search = (_OPENERS if not self.starts else _TOKENS if self.top_is_json() else _BRACKETS).search
        self.truncated(self.cut_string)
        return self.spans

    def _open(self, match: re.Match[str]) -> int:
        """Open a run of brackets (the last one may close at once: a leaf); where the scan goes on.

        Outside every JSON-looking span, a bracket that does not open like JSON
        is prose and is not kept at all: only inside JSON do brackets of
        prose have to be matched (``{"note": [see below], ...}``).
        """
        start, run, last = match.start(), match.group(), match.end() - 1
        if len(run) > 1 and not self.starts:
            # in a run, a "[" before another bracket opens like JSON, a "{" never does
            first = run.find("[", 0, len(run) - 1)
            start, run = (last, run[-1]) if first < 0 else (start + first, run[first:])
        leaf = _LEAF.match(self.text, last)
        if leaf is not None and leaf.group()[-1] == _CLOSE[run[-1]]:
            if len(run) > 1:
                self.push(start, run[:-1])
            self.leaf(last, leaf.group())
            return leaf.end()
        if self.starts or len(run) > 1 or _json_like(self.text, last, run):
            self.push(start, run)
        return match.end()

    def _close(self, j: int, char: str) -> bool:
        """Close the bracket that ``char`` at ``j`` matches; False when it matches none (prose)."""
        want = "{" if char == "}" else "["
        if not self.open[want]:
            return False
        while self.chars[-1] != want:
            self.pop(None)  # abandoned: never closed
        self.pop(j + 1)
        return True

    def _token(self, j: int, char: str) -> int:
        """A quote, colon or comment start inside a JSON-looking span; where the scan goes on."""
        text = self.text
        if char == '"' or (char == "'" and _VALUE_BEFORE.search(text, max(0, j - 64), j)):
            string = _STRING[char].match(text, j)
            assert string is not None  # the pattern matches any quote
            end = string.end()
            closed = end > j + 1 and text[end - 1] == char
            self.key = (end, text[j + 1 : end - 1 if closed else end])
            self.cut_string = j if not closed and end == len(text) else None
            return end
        if char == ":":
            self.structure[-1] = True
            if self.key is not None and self.chars[-1] == "{" and not text[self.key[0] : j].strip():
                self.add_key(self.key[1])
            self.key = None
        elif char == "#" or text.startswith("//", j):
            line_end = text.find("\n", j)
            return len(text) if line_end < 0 else line_end
        elif text.startswith("/*", j):
            if self.comment_end < j + 2:
                found = text.find("*/", j + 2)
                self.comment_end = len(text) if found < 0 else found
            return min(len(text), self.comment_end + 2)
        return j + 1

    def truncated(self, cut_string: int | None) -> None:
        """Keep the outermost JSON-looking span still open at the end, with what would close it."""
        count = len(self.starts)
        # a frame with MAX_SPAN_DEPTH open frames inside it is too deep: only the innermost can qualify
        first = max(0, count - MAX_SPAN_DEPTH)
        depths = self.depth[first:]
        for k in range(len(depths) - 2, -1, -1):
            depths[k] = max(depths[k], depths[k + 1] + 1)
        for k in range(first, count):
            if not (self.structure[k] and depths[k - first] < MAX_SPAN_DEPTH):
                continue
            if self.json[k] is None:
                self.json[k] = _json_like(self.text, self.starts[k], self.chars[k])
            if self.json[k]:
                closers = "".join(_CLOSE[c] for c in reversed(self.chars[k:]))
                duplicates = frozenset().union(*(d for level, d in self.duplicates.items() if level >= k))
                span = Span(self.starts[k], len(self.text), duplicates, closers, cut_string=cut_string)
                self._keep(self.marks[k], span)
                return


def scan(text: str) -> list[Span]:
    """The outermost JSON-looking spans of ``text`` in text order, each with the spans inside it.

    Parameters
    ----------
    text
        An LLM's raw response.

    Returns
    -------
    list of Span
        See the module docstring for what counts.
    """
    return _Scan(text).run()
