"""Find and decode the JSON in an LLM's raw text, in one linear pass.

LLM answers wrap their JSON in prose and code fences, and often break it
(trailing commas, single quotes, comments, a truncated end). The text is
scanned once (:mod:`peakopt.oracle.answers.scan` says which spans count), and every
outermost span is decoded with :mod:`json` or, where that fails, repaired
with `json-repair <https://pypi.org/project/json-repair/>`_; a span that does
not decode gives way to the spans inside it. The spans come back in text
order.

A truncated span (still open at the end of the text) is decoded by
:mod:`json` with its brackets closed, dropping the last token when the cut
left it incomplete (``4.`` of ``4.5``, a key without its value); the spans
inside it are pieces of a cut-off value and are flagged truncated too. One
that only json-repair could read is not read when spans lie inside it (its
bracket may be prose, ``[1, 2 ...`` never closed): those spans are.

Every span is decoded at most once (spans of equal text share one value), so
the work is linear in the text; json-repair (pure Python, about 1 µs per
character) gets only spans that :mod:`json` rejects, of at most
:data:`REPAIR_LIMIT` characters, and that name a step of the workflow.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from peakopt.oracle.answers.scan import Span, scan

T = TypeVar("T")

#: Keys under which a list item names its step.
ID_KEYS = ("id", "step", "step_id", "task", "task_id", "name")

#: Longer spans that :mod:`json` rejects are not repaired (json-repair's cost grows with the span).
REPAIR_LIMIT = 100_000

#: The last token of a text, which a cut may have left incomplete: a key, a number, a word, ``,`` or ``:``.
_TAIL = re.compile(r"""(?:,|:|"(?:[^"\\\n]|\\.)*"|[-+\w.]+)\s*\Z""")
_WORD = re.compile(r"[\w.\-]+")
#: A Markdown code fence (a line of three backticks or tildes, or more).
_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})", re.MULTILINE)


class Decoded(NamedTuple):
    """One JSON value found in a text.

    Attributes
    ----------
    value
        The decoded value (a dict or a list).
    start, end
        Where its span lies in the text (``end`` is the text's length when truncated).
    duplicates
        Keys that some object of the span gives more than once (decoding keeps the last).
    repaired
        True when json-repair had to fix the span.
    truncated
        True when the span is still open at the end of the text (a cut-off answer).
    unclosed
        What would close the span, when it is still open at the end of the text but a
        code fence follows its start: the JSON was left open, not cut off (else empty).
    """

    value: Any
    start: int
    end: int
    duplicates: frozenset[str] = frozenset()
    repaired: bool = False
    truncated: bool = False
    unclosed: str = ""


def _loads(raw: str) -> tuple[Any] | None:
    try:
        return (json.loads(raw),)
    except (ValueError, RecursionError):
        return None


def _cut(span: Span, raw: str) -> Any:
    """The value of a span cut off at the end of the text, by :mod:`json` alone, or None.

    A string the text ends in is dropped, and the brackets left open are
    closed; then, as long as that does not decode, the last token is dropped
    (a cut number or word, a key left without its value, a dangling ``,`` or
    ``:``), a few times at most.
    """
    closers = span.closers
    if span.cut_string is not None:
        raw = raw[: span.cut_string - span.start]
    for _ in range(6):
        found = _loads(raw + closers)
        if found is not None:
            return found[0]
        tail = _TAIL.search(raw, max(0, len(raw) - 256))  # a bounded window: no quadratic search
        if tail is None or tail.start() == 0:
            return None
        raw = raw[: tail.start()]
    return None


def _repair(raw: str, relevant: Callable[[str], bool]) -> Any:
    """The value json-repair makes of a span, or None (too long, irrelevant, or nothing)."""
    if len(raw) > REPAIR_LIMIT or not relevant(raw):
        return None
    try:
        from json_repair import repair_json  # only for an answer that needs repairing

        repaired = repair_json(raw)
    except Exception:  # any failure of the repair on arbitrary text (e.g. too deep) means: no JSON here
        return None
    found = _loads(repaired) if isinstance(repaired, str) else None
    return None if found is None else found[0]


def _decode(span: Span, raw: str, relevant: Callable[[str], bool]) -> tuple[Any, bool] | None:
    """The value of a span and whether it needed repair; None when it holds no object or array.

    A truncated span that only json-repair can read, and that holds other
    spans, is not read: its brackets may be prose (``[1, 2 ...`` never closed)
    and the spans inside are read instead.
    """
    if span.closers:
        value = _cut(span, raw)
        if value is None and not span.inner:
            value, repaired = _repair(raw, relevant), True
        else:
            repaired = False
    else:
        found = _loads(raw)
        value, repaired = (found[0], False) if found is not None else (_repair(raw, relevant), True)
    return (value, repaired) if isinstance(value, dict | list) and value else None


def find_json(text: str, relevant: Callable[[str], bool] = lambda raw: True) -> list[Decoded]:
    """Every JSON object or array in ``text``, in text order.

    Parameters
    ----------
    text
        An LLM's raw response.
    relevant
        Whether a span that :mod:`json` rejects is worth repairing (e.g. it
        names a step of the workflow); spans it turns down are not decoded.

    Returns
    -------
    list of Decoded
        The outermost spans that decode to a non-empty object or array (see
        the module docstring); where a span does not, the spans inside it.
        The spans inside a truncated span follow it. Spans of equal text
        share one decoded value.
    """
    found: list[Decoded] = []
    cache: dict[str, tuple[Any, bool] | None] = {}  # answers repeat spans: decode each text once

    def visit(spans: Sequence[Span], cut: bool, unclosed: str) -> None:  # cut: inside a span cut off
        for span in spans:
            # open at the end, but a fence closes the block it is in: the model left it open there
            fence = _FENCE.search(text, span.start) if span.closers else None
            if fence is not None:
                span = replace(span, end=fence.start(), cut_string=None)  # what lies before the fence
            raw = text[span.start : span.end]
            key = raw + "\0" + span.closers if span.closers else raw
            result = cache[key] if key in cache else cache.setdefault(key, _decode(span, raw, relevant))
            left = unclosed or (span.closers if fence is not None else "")
            if result is not None:
                truncated = cut or bool(span.closers)
                found.append(
                    Decoded(result[0], span.start, span.end, span.duplicates, result[1], truncated, left)
                )
            if (result is None or span.closers) and span.inner:
                # the spans inside a cut-off JSON value are pieces of it, cut off too
                visit(span.inner, result is not None, left if result is not None else "")

    visit(scan(text), False, "")
    return found


def naming(steps: Collection[str]) -> Callable[[str], bool]:
    """Whether a span's text names one of ``steps`` (any text does, when no step is known).

    A span that names no step of the workflow cannot hold its schedule or its
    dependencies: it is not worth repairing.
    """
    if not steps:
        return lambda raw: True
    words = {s for s in steps if _WORD.fullmatch(s)}
    others = [s for s in steps if s not in words]
    return lambda raw: not words.isdisjoint(_WORD.findall(raw)) or any(s in raw for s in others)


def is_id(value: Any) -> bool:
    """Whether ``value`` can be a step id (a string or an integer, not a boolean)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def step_of(item: Any) -> str | None:
    """The step id an object names under one of :data:`ID_KEYS`, if any."""
    if not isinstance(item, dict):
        return None
    return next((str(item[k]) for k in ID_KEYS if is_id(item.get(k))), None)


def find_parts(
    value: Any,
    accept: Callable[[Any, str | None], T | None],
    first: Collection[str] = (),
    skip: Callable[[str], bool] = lambda key: False,
) -> list[tuple[T, tuple[str, ...]]]:
    """Breadth-first search of a decoded value for every part that ``accept`` takes.

    Parameters
    ----------
    value
        A decoded JSON value.
    accept
        Called with each nested dict or list and the key it sits under (None
        in lists and at the top); returns the interpretation, or None to go on.
        The parts of an accepted node are not searched further.
    first
        Keys whose values are searched before their siblings' (``schedule``,
        ``dependencies``...), compared case-insensitively.
    skip
        Keys whose values are not searched at all.

    Returns
    -------
    list of (interpretation, keys)
        In the order found, each with the keys on the path to its part.
    """
    found: list[tuple[T, tuple[str, ...]]] = []
    queue: deque[tuple[Any, str | None, tuple[str, ...]]] = deque([(value, None, ())])
    while queue:
        node, key, path = queue.popleft()
        taken = accept(node, key)
        if taken is not None:
            found.append((taken, path))
        elif isinstance(node, dict):
            children = sorted(node.items(), key=lambda kv: str(kv[0]).lower() not in first)
            queue.extend(
                (v, str(k), (*path, str(k)))
                for k, v in children
                if isinstance(v, dict | list) and not skip(str(k))
            )
        elif isinstance(node, list):
            queue.extend((v, None, path) for v in node if isinstance(v, dict | list))
    return found
