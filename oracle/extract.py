"""Find and decode the JSON in an LLM's raw text: code fences, JSON inside prose, broken JSON.

LLM answers wrap their JSON in prose and code fences, and often break it
(trailing commas, single quotes, comments, a truncated end). This module finds
every bracketed span, decodes each with :mod:`json` or else repairs it with
`json-repair <https://pypi.org/project/json-repair/>`_, and returns them in
order of preference: spans inside code fences first, later spans before
earlier ones (a model that drafts then revises puts its final answer last).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, TypeVar

from json_repair import repair_json

T = TypeVar("T")

#: Keys under which a list item names its step.
ID_KEYS = ("id", "step", "step_id", "task", "task_id", "name")

#: More candidates than this in one response are ignored (bounds the work on pathological text).
MAX_CANDIDATES = 64
#: Spans nested deeper than this are skipped: no schedule is, and json-repair recurses on them.
MAX_DEPTH = 64

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CLOSE = {"{": "}", "[": "]"}


@dataclass(frozen=True)
class Decoded:
    """One JSON value found in a text.

    Attributes
    ----------
    value
        The decoded value.
    duplicates
        Keys that some object of the span gives more than once (decoding keeps the last).
    repaired
        True when json-repair had to fix the span.
    fenced
        True when the span sits inside a Markdown code fence.
    """

    value: Any
    duplicates: frozenset[str] = field(default_factory=frozenset)
    repaired: bool = False
    fenced: bool = False


@dataclass
class _Span:
    end: int | None  # None when the span never closes (a truncated answer)
    duplicates: set[str]
    deep: bool = False  # nested deeper than MAX_DEPTH: not an answer, and costly to repair


def _skip_string(text: str, start: int) -> int:
    """Index just after the string that opens at ``start`` (or len(text) if unterminated)."""
    quote, j = text[start], start + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return len(text)


def _skip_comment(text: str, start: int) -> int:
    """Index just after a ``//``, ``#`` or ``/* */`` comment, or ``start`` if there is none."""
    if text.startswith("/*", start):
        end = text.find("*/", start + 2)
        return len(text) if end < 0 else end + 2
    if text.startswith(("//", "#"), start):
        end = text.find("\n", start)
        return len(text) if end < 0 else end
    return start


def _span(text: str, start: int) -> _Span:
    """Scan the bracketed span opening at ``start``; note keys an object repeats."""
    stack: list[tuple[str, set[str]]] = [(text[start], set())]
    duplicates: set[str] = set()
    j = start + 1
    while j < len(text):
        char = text[j]
        after_comment = _skip_comment(text, j)
        if after_comment != j:
            j = after_comment
        elif char in "\"'":
            end = _skip_string(text, j)
            rest = text[end:].lstrip()
            if stack[-1][0] == "{" and rest.startswith(":"):
                key = text[j + 1 : end - 1]
                if key in stack[-1][1]:
                    duplicates.add(key)
                stack[-1][1].add(key)
            j = end
        elif char in _CLOSE:
            if len(stack) >= MAX_DEPTH:
                return _Span(None, duplicates, deep=True)
            stack.append((char, set()))
            j += 1
        elif char in "}]":
            if _CLOSE[stack[-1][0]] != char:
                return _Span(None, duplicates)
            stack.pop()
            j += 1
            if not stack:
                return _Span(j, duplicates)
        else:
            j += 1
    return _Span(None, duplicates)


def _fences(text: str) -> list[tuple[int, int]]:
    return [(m.start(1), m.end(1)) for m in _FENCE.finditer(text)]


@dataclass(frozen=True)
class _Candidate:
    text: str
    duplicates: frozenset[str]
    fenced: bool
    nested: bool  # inside an unclosed span, which is tried first


def _candidates(text: str) -> list[_Candidate]:
    """Every top-level bracketed span, and the spans inside unclosed ones."""
    fences = _fences(text)
    found: list[_Candidate] = []
    i, unclosed_from, tried = 0, len(text), 0
    while i < len(text) and tried < MAX_CANDIDATES:
        if text[i] not in _CLOSE:
            i += 1
            continue
        span = _span(text, i)
        tried += 1
        fenced = any(a <= i < b for a, b in fences)
        nested = i > unclosed_from
        if span.deep:
            i += 1
        elif span.end is None:
            # Unclosed (a truncated answer, or a stray quote): json-repair closes it; the
            # spans inside it are still tried, after it, in case the scan went wrong.
            found.append(_Candidate(text[i:], frozenset(span.duplicates), fenced, nested))
            unclosed_from = min(unclosed_from, i)
            i += 1
        else:
            found.append(_Candidate(text[i : span.end], frozenset(span.duplicates), fenced, nested))
            i = span.end
    return found


def _decode(candidate: str) -> tuple[Any, bool] | None:
    """The value of a candidate span, and whether it needed repair; None if nothing decodes."""
    try:
        return json.loads(candidate), False
    except (ValueError, RecursionError):
        pass
    try:
        repaired = repair_json(candidate)
    except Exception:  # any failure of the repair on arbitrary text (e.g. too deep) means: no JSON here
        return None
    if not isinstance(repaired, str) or not repaired.strip() or repaired.strip() == '""':
        return None
    try:
        return json.loads(repaired), True
    except (ValueError, RecursionError):
        return None


def find_json(text: str) -> list[Decoded]:
    """Every JSON object or array in ``text``, most likely answer first.

    Parameters
    ----------
    text
        An LLM's raw response.

    Returns
    -------
    list of Decoded
        Spans inside code fences first, then the others; within each, the
        last span first; spans nested in an unclosed span come after all
        these. Spans that decode to a scalar are left out.
    """
    ranked = []
    for candidate in reversed(_candidates(text)):
        result = _decode(candidate.text)
        if result is not None and isinstance(result[0], dict | list):
            decoded = Decoded(result[0], candidate.duplicates, result[1], candidate.fenced)
            ranked.append(((candidate.nested, not candidate.fenced), decoded))
    ranked.sort(key=lambda pair: pair[0])  # stable: keeps last-first within each rank
    return [decoded for _, decoded in ranked]


def is_id(value: Any) -> bool:
    """Whether ``value`` can be a step id (a string or an integer, not a boolean)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def step_of(item: Any) -> str | None:
    """The step id an object names under one of :data:`ID_KEYS`, if any."""
    if not isinstance(item, dict):
        return None
    return next((str(item[k]) for k in ID_KEYS if is_id(item.get(k))), None)


def search(
    value: Any, accept: Callable[[Any, str | None], T | None], first: Collection[str] = ()
) -> T | None:
    """Breadth-first search of a decoded value for the first part that ``accept`` takes.

    Parameters
    ----------
    value
        A decoded JSON value.
    accept
        Called with each nested dict or list and the key it sits under (None
        in lists and at the top); returns the interpretation, or None to go on.
    first
        Keys whose values are searched before their siblings' (``schedule``,
        ``dependencies``...), compared case-insensitively.
    """
    queue: deque[tuple[Any, str | None]] = deque([(value, None)])
    while queue:
        node, key = queue.popleft()
        found = accept(node, key)
        if found is not None:
            return found
        if isinstance(node, dict):
            children = sorted(node.items(), key=lambda kv: str(kv[0]).lower() not in first)
            queue.extend((v, str(k)) for k, v in children if isinstance(v, dict | list))
        elif isinstance(node, list):
            queue.extend((v, None) for v in node if isinstance(v, dict | list))
    return None
