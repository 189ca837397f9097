"""Which part of an LLM's response is its answer, and which of several readings it gives.

The rule, applied alike to schedules (``peakopt score``) and dependency
structures (``peakopt plan-score``):

1. **Reasoning is not the answer.** Text inside ``<think>…</think>``,
   ``<thinking>…</thinking>`` or ``<reasoning>…</reasoning>`` (any case) is
   reasoning. An opening tag never closed (truncated reasoning) runs to the
   end of the text; a closing tag without its opening one (some APIs drop it)
   makes everything before it reasoning. The answer is the text outside; the
   reasoning is read only when the answer holds no reading at all.
2. **Every reading counts.** Each JSON span of the answer is decoded
   (:func:`peakopt.oracle.answers.extract.find_json`) and every part of it that reads
   as a schedule (or structure) is a reading.
3. **Repeats are one reading.** Readings that are equal are one. For
   schedules, a reading whose every step has the same timing in another
   reading (a quotation of part of it) is that reading too.
4. **One reading left: it is the answer.** Otherwise the readings *marked
   final* are kept, and if exactly one is left, it is the answer. A reading is
   marked final when
   - it lies inside an ``<answer>…</answer>`` element;
   - a label stands between it and the previous reading's span: the word
     *final* followed within 40 characters (on its line, before any ``.``,
     ``!`` or ``?``) by a colon — ``Final answer:``, ``Final schedule (safe):``
     —, or a Markdown heading or bold line holding the word *final*
     (``## Final schedule``, ``**Final answer**``);
   - it sits under a JSON key holding *final* (``final_schedule``,
     ``finalAnswer``); within one span, such keys take precedence over a
     label before the span.
5. **Otherwise the answer is ambiguous**: several different readings, none
   or several of them marked final. It is never silently scored on the first
   or the last (a counter-example quoted after the answer, a draft before it).
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from peakopt.oracle.answers.extract import Decoded

T = TypeVar("T")

_TAG = re.compile(r"<\s*(/?)\s*(think|thinking|reasoning)\b[^<>]*>", re.IGNORECASE)
_ANSWER = re.compile(r"<\s*answer\b[^<>]*>(.*?)(?:<\s*/\s*answer\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(
    r"\bfinal(?:\b|_)[^\n:.!?]{0,40}[:：]|^[ \t]*(?:#{1,6}[ \t]|\*\*|__)[^\n]*\bfinal\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_FINAL_KEY = re.compile(r"final", re.IGNORECASE)


@dataclass(frozen=True)
class Parts:
    """A response split into its answer and its reasoning (the reasoning blocks joined by newlines)."""

    answer: str
    reasoning: str


def split_reasoning(text: str) -> Parts:
    """The text outside reasoning blocks, and the text inside them (see the module docstring, rule 1)."""
    answer: list[str] = []
    reasoning: list[str] = []
    inside: str | None = None  # the name of the open block
    depth, since = 0, 0
    for tag in _TAG.finditer(text):
        closing, name = tag.group(1) == "/", tag.group(2).lower()
        if inside is None and closing:
            # a closing tag without its opening one: all before it was reasoning
            reasoning.append(text[since : tag.start()])
            since = tag.end()
        elif inside is None:
            answer.append(text[since : tag.start()])
            inside, depth, since = name, 1, tag.end()
        elif name == inside:
            depth += -1 if closing else 1
            if not depth:
                reasoning.append(text[since : tag.start()])
                inside, since = None, tag.end()
    (answer if inside is None else reasoning).append(text[since:])
    return Parts("\n".join(answer), "\n".join(reasoning))


class Reading(NamedTuple, Generic[T]):
    """One interpretation of part of a response.

    Attributes
    ----------
    value
        The schedule or structure read.
    span
        The JSON span it was read from.
    final_key
        True when it sits under a JSON key holding *final*.
    marked
        True when the text marks it final (set by :func:`choose_reading`).
    """

    value: T
    span: Decoded
    final_key: bool = False
    marked: bool = False


def under_final_key(path: Sequence[str]) -> bool:
    """Whether a part found under the keys ``path`` sits under a key holding *final*."""
    return any(_FINAL_KEY.search(key) for key in path)


@dataclass(frozen=True)
class Ambiguous:
    """Several different readings, and how many of them are marked final."""

    readings: int
    marked: int

    def message(self, what: str) -> str:
        """Why no reading was chosen, calling the readings ``what`` (``schedules``...)."""
        marks = "none" if not self.marked else f"{self.marked}"
        return (
            f"the answer gives {self.readings} different {what} and marks {marks} as final "
            "(a 'Final answer:' label or heading, an <answer> element, or a final_* key)"
        )


def _inside(regions: list[tuple[int, int]], position: int) -> bool:
    """Whether ``position`` lies in one of ``regions`` (sorted, disjoint)."""
    k = bisect.bisect_right(regions, (position, math.inf)) - 1
    return k >= 0 and regions[k][0] <= position < regions[k][1]


def _mark(readings: Sequence[Reading[T]], text: str) -> list[Reading[T]]:
    """Each reading with ``marked`` set from the text before its span and its key.

    The text looked at runs from the end of the previous span (or the start of
    the span that holds this one, for a span inside a truncated one) to the
    start of this one.
    """
    answers = [(m.start(), m.end()) for m in _ANSWER.finditer(text)]
    keyed = {r.span.start for r in readings if r.final_key}
    marked: list[Reading[T]] = []
    holders: list[Decoded] = []  # the spans seen that are still open at this one
    after, labelled, current = 0, False, -1
    for reading in readings:
        span = reading.span
        if span.start != current:  # a new span
            while holders and holders[-1].end <= span.start:
                after = max(after, holders.pop().end)
            begin = max(after, holders[-1].start if holders else 0)
            labelled = _LABEL.search(text, begin, span.start) is not None or _inside(answers, span.start)
            holders.append(span)
            current = span.start
        final = reading.final_key if span.start in keyed else labelled
        marked.append(reading._replace(marked=final))
    return marked


def choose_reading(
    readings: Sequence[Reading[T]],
    text: str,
    key: Callable[[T], Hashable],
    parts: Callable[[T], frozenset[Hashable]] | None = None,
) -> Reading[T] | Ambiguous:
    """The answer among ``readings`` (in text order), by the rule of the module docstring.

    Parameters
    ----------
    readings
        Every reading of the answer text, in the order of their spans.
    text
        The text the spans lie in (for the labels and ``<answer>`` elements).
    key
        Equal keys: equal readings.
    parts
        For readings that can quote one another (schedules): the reading's
        parts; a reading whose parts are all another's is that reading.

    Returns
    -------
    Reading or Ambiguous
        The chosen reading (``span.truncated`` False if any copy of it was
        complete), or why none is.
    """
    groups: dict[Hashable, Reading[T]] = {}
    for reading in _mark(readings, text):
        kept = groups.setdefault(key(reading.value), reading)
        if kept is not reading:  # a repeat: marked if any copy is, complete if any copy is
            span = reading.span if kept.span.truncated and not reading.span.truncated else kept.span
            groups[key(reading.value)] = kept._replace(span=span, marked=kept.marked or reading.marked)
    distinct = list(groups.values())
    if parts is not None:
        distinct = _maximal(distinct, parts)
    if len(distinct) == 1:
        return distinct[0]
    final = [r for r in distinct if r.marked]
    return final[0] if len(final) == 1 else Ambiguous(len(distinct), len(final))


def _maximal(readings: list[Reading[T]], parts: Callable[[T], frozenset[Hashable]]) -> list[Reading[T]]:
    """The readings no other one holds; a reading held by another passes its mark to it."""
    ranked = sorted(readings, key=lambda r: -len(parts(r.value)))
    kept: list[Reading[T]] = []
    holders: dict[Hashable, list[int]] = {}  # part -> kept readings holding it, to avoid comparing all pairs
    for reading in ranked:
        own = parts(reading.value)
        first = next(iter(own), None)
        by = [i for i in holders.get(first, []) if own <= parts(kept[i].value)]
        if by and own:
            if reading.marked:
                for i in by:
                    kept[i] = kept[i]._replace(marked=True)
            continue
        for part in own:
            holders.setdefault(part, []).append(len(kept))
        kept.append(reading)
    return sorted(kept, key=lambda r: r.span.start)
