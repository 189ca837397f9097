"""Read a schedule out of an LLM's answer or a record's ``starts``.

Accepted shapes, at the top or nested under any key (``schedule``,
``starts``, ``plan``... are searched first):

- a map of step -> start: ``{"lookup": 0, "score": "1.5"}``;
- a map of step -> object: ``{"lookup": {"start": 0}}`` or
  ``{"lookup": {"requested_delay": 0.5}}``;
- a list of objects naming the step (``id``, ``step``, ``step_id``, ``task``,
  ``name``) and its ``start`` (or ``start_time``...) or PeakBench's
  ``requested_delay``;
- a list of ``[step, start]`` pairs.

Numbers may be strings, with or without a unit (``"1.5"``, ``"1.5s"``). A
map under ``requested_delays`` or ``delays`` holds delays. When the
workflow's step ids are known, keys that are not steps and hold no number
(``"reasoning": "..."``) and summary keys (``makespan``...) are ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from peakopt.oracle.extract import find_json, search, step_of
from peakopt.oracle.score import Violation

Kind = Literal["start", "delay"]

START_KEYS = ("start", "start_time", "start_s", "starts_at", "start_at", "begin")
DELAY_KEYS = ("requested_delay", "requested_delay_s", "delay", "delay_s")
_TIMING_KEYS: tuple[tuple[Kind, tuple[str, ...]], ...] = (("start", START_KEYS), ("delay", DELAY_KEYS))
#: Keys whose content is searched first, and those whose plain numbers are delays.
WRAPPERS = ("schedule", "starts", "start_times", "plan", "steps", "tasks", "execution_plan", "answer")
DELAY_WRAPPERS = ("requested_delays", "delays", "requested_delay")
#: Figures an answer often adds beside its starts; ignored unless they are step ids.
SUMMARY_KEYS = frozenset(
    {"makespan", "total_time", "total_duration", "estimated_makespan", "completion_time", "end_time"}
)
_NUMBER = re.compile(
    r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?:s|sec|secs|seconds?)?$", re.IGNORECASE
)


@dataclass(frozen=True)
class Parsed:
    """Timings read from a record.

    Attributes
    ----------
    values
        Step id -> start time, or requested delay when ``kind`` is ``delay``.
    kind
        ``start`` or ``delay``.
    problems
        Non-numeric or non-finite timings and steps given twice (each makes
        the record invalid); such steps are left out of ``values``.
    repaired
        True when the JSON needed json-repair.
    """

    values: dict[str, float]
    kind: Kind
    problems: tuple[Violation, ...] = ()
    repaired: bool = False


def number(raw: Any) -> float | None:
    """``raw`` as a finite float (numbers, numeric strings with an optional unit), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        match = _NUMBER.match(raw.strip()) if isinstance(raw, str) else None
        if match is None:
            return None
        value = float(match.group(1))
    return value if math.isfinite(value) else None


def _timing(raw: Any, kind: Kind) -> tuple[Kind, Any] | None:
    """The (kind, raw value) a map value gives, or None when it is no timing at all."""
    if isinstance(raw, dict):
        for found, keys in _TIMING_KEYS:
            for key in keys:
                if key in raw:
                    return found, raw[key]
        return None
    if isinstance(raw, list):
        return None
    return kind, raw


def _entry(item: Any) -> tuple[str, Kind, Any] | None:
    """(step, kind, raw value) of a list item, or None when it does not name a step and a timing."""
    if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
        return item[0], "start", item[1]
    step = step_of(item)
    timing = _timing(item, "start") if step is not None else None
    if step is None or timing is None:
        return None
    return step, timing[0], timing[1]


class _Collector:
    """Builds a :class:`Parsed` from (step, kind, raw) triples, noting every problem."""

    def __init__(self, duplicates: Collection[str] = ()) -> None:
        self.values: dict[str, float] = {}
        self.kinds: set[Kind] = set()
        self.problems: list[Violation] = []
        self.seen: set[str] = set()
        self.duplicates = duplicates

    def add(self, step: str, kind: Kind, raw: Any) -> None:
        if step in self.seen or step in self.duplicates:
            if step not in {t for p in self.problems if p.kind == "duplicate" for t in p.tasks}:
                self.problems.append(
                    Violation(kind="duplicate", message=f"step {step!r} is given twice", tasks=(step,))
                )
            self.values.pop(step, None)
            return
        self.seen.add(step)
        self.kinds.add(kind)
        value = number(raw)
        if value is None:
            what = "start" if kind == "start" else "requested delay"
            message = f"step {step!r}: {what} {raw!r} is not a finite number"
            self.problems.append(Violation(kind="non_numeric", message=message, tasks=(step,)))
        else:
            self.values[step] = value

    def result(self, repaired: bool) -> Parsed | None:
        if not self.seen:
            return None
        if len(self.kinds) > 1:
            message = "the schedule mixes start times and requested delays"
            self.problems.append(Violation(kind="parse", message=message))
        kind: Kind = "delay" if self.kinds == {"delay"} else "start"
        return Parsed(self.values, kind, tuple(self.problems), repaired)


def _accept(
    node: Any, key: str | None, steps: Collection[str], duplicates: Collection[str]
) -> _Collector | None:
    """Read ``node`` as a schedule, if it is one."""
    collector = _Collector(duplicates)
    single = _entry(node)
    items = [node] if single else node if isinstance(node, list) else None
    if items is not None:
        entries = [e for e in map(_entry, items) if e is not None]
        collector.duplicates = ()  # a list repeats keys across its objects; only steps count
        for step, kind, raw in entries:
            collector.add(step, kind, raw)
    elif isinstance(node, dict):
        default: Kind = "delay" if key is not None and key.lower() in DELAY_WRAPPERS else "start"
        for step, raw in node.items():
            timing = _timing(raw, default)
            if timing is None or (step in SUMMARY_KEYS and step not in steps):
                continue
            if steps and step not in steps and number(timing[1]) is None:
                continue  # text under a key that is no step: commentary
            collector.add(step, *timing)
        if not collector.values and not collector.seen & set(steps):
            return None
    return collector if collector.seen else None


def parse_starts(value: Any, steps: Collection[str] = (), duplicates: Collection[str] = ()) -> Parsed | None:
    """Interpret a decoded JSON value (a record's ``starts``) as a schedule.

    Parameters
    ----------
    value
        The value; searched breadth-first for the first part that is a schedule.
    steps
        The workflow's step ids, if known (helps to skip commentary keys).
    duplicates
        Keys the source text repeats in one object (the decoded value lost all but one).

    Returns
    -------
    Parsed or None
        None when no part of ``value`` is a schedule.
    """
    found = search(value, lambda node, key: _accept(node, key, steps, duplicates), WRAPPERS + DELAY_WRAPPERS)
    return None if found is None else found.result(repaired=False)


def parse_response(text: str, steps: Collection[str] = ()) -> Parsed | Violation:
    """Extract a schedule from an LLM's raw answer.

    Parameters
    ----------
    text
        The raw response: prose, code fences, possibly broken JSON.
    steps
        The workflow's step ids, if known.

    Returns
    -------
    Parsed or Violation
        The schedule found in the most likely JSON span (see
        :func:`peakopt.oracle.extract.find_json`), or a ``parse`` violation
        saying why there is none.
    """
    if not text.strip():
        return Violation(kind="parse", message="empty response")
    decoded = find_json(text)
    for candidate in decoded:
        parsed = parse_starts(candidate.value, steps, candidate.duplicates)
        if parsed is not None:
            return Parsed(parsed.values, parsed.kind, parsed.problems, candidate.repaired)
    if not decoded:
        excerpt = " ".join(text.split())
        excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "..."
        return Violation(kind="parse", message=f"no JSON in the response: {excerpt!r}")
    expected = "step -> start, or a list of {id, start}"
    return Violation(kind="parse", message=f"the response's JSON holds no schedule ({expected})")
