"""Read a schedule out of an LLM's answer or a record's ``starts``.

Accepted shapes, at the top or nested under any key (``schedule``,
``starts``, ``plan``... are searched first):

- a map of step -> start: ``{"lookup": 0, "score": "1.5"}``;
- a map of step -> object: ``{"lookup": {"start": 0}}`` or
  ``{"lookup": {"requested_delay": 0.5}}``;
- a list of objects naming the step (``id``, ``step``, ``step_id``, ``task``,
  ``name``) and its ``start`` (or ``start_time``...) or PeakBench's
  ``requested_delay``;
- a list of ``[step, start]`` pairs; a step id may be a number when the
  workflow has that step (PSPLIB's ``[[1, 0], [2, 2.5]]``).

Numbers may be strings, with or without a unit: ``"1.5"``, ``"1.5 s"``,
``"4800ms"``, ``"250 us"``, ``"2 min"``, ``"1 h"`` (``m`` alone is refused:
minutes or milli?). Units convert in decimal arithmetic, so ``"4800ms"`` is
exactly the float ``4.8`` (:mod:`peakopt.oracle.answers.numbers`). A map under
``requested_delays`` or ``delays`` holds delays. When the workflow's step ids are known, a map is a schedule
only if one of its keys is a step and one of its values a number (or a
start object); keys that are not steps and hold no number
(``"reasoning": "..."``), summary keys (``makespan``...), maps of other
times (``end_times``, ``finish``, ``durations``...) and dependency
structures beside the schedule are ignored; a list or map with no time in
it (only text) is no schedule.

A timing for an id that is no step (when the steps are known) is not read
but named, with the nearest step id. When no part of an answer reads as a
schedule, the part that is a schedule gone wrong (times under ids that are
no steps, steps whose values are not read) says why; the reasons' kinds and
wording are :mod:`peakopt.oracle.answers.reasons`'.

Which of several schedules in one response is the answer, and what the
reasoning of a reasoning model counts for, is :mod:`peakopt.oracle.answers.answer`'s
rule. An answer cut off inside its JSON is *truncated*: its last value may
be cut (``8`` of ``8.5``), so it is reported as such, not scored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Hashable
from dataclasses import dataclass, replace
from typing import Any, Literal

from peakopt.oracle.answers import reasons
from peakopt.oracle.answers.answer import Ambiguous, Reading, choose_reading, split_reasoning, under_final_key
from peakopt.oracle.answers.extract import Decoded, find_json, find_parts, is_id, naming, step_of
from peakopt.oracle.answers.numbers import read_number, time_like, unread_unit
from peakopt.oracle.judge.verdict import Violation

#: What an answer's timings are: start times, or requested delays (replayed, see ``replay``).
TimingKind = Literal["start", "delay"]

START_KEYS = ("start", "start_time", "start_s", "starts_at", "start_at", "begin")
DELAY_KEYS = ("requested_delay", "requested_delay_s", "delay", "delay_s")
_TIMING_KEYS: tuple[tuple[TimingKind, tuple[str, ...]], ...] = (("start", START_KEYS), ("delay", DELAY_KEYS))
#: Keys whose content is searched first, and those whose plain numbers are delays.
WRAPPERS = ("schedule", "starts", "start_times", "plan", "steps", "tasks", "execution_plan", "answer")
DELAY_WRAPPERS = ("requested_delays", "delays", "requested_delay")
#: Figures an answer often adds beside its starts; ignored unless they are step ids.
SUMMARY_KEYS = frozenset(
    {"makespan", "total_time", "total_duration", "estimated_makespan", "completion_time", "end_time"}
)
#: Words that make a key (not a step) hold times other than starts: its content is no schedule.
OTHER_TIMES = frozenset(
    {"end", "ends", "finish", "finishes", "finished", "completion", "completions", "duration", "durations"}
    | {"deadline", "deadlines", "stop", "stops"}
)
#: Keys of a dependency structure beside the schedule (``[["a", "b"]]`` there is an edge).
DEPENDENCY_KEYS = frozenset(
    {"dependencies", "dependency_structure", "depends_on", "predecessors", "edges", "graph", "dag"}
)
_WORDS = re.compile(r"[^a-z]+")


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
        Non-numeric or non-finite timings, steps given twice, a truncated
        answer (each makes the record invalid); such steps are left out of
        ``values``.
    repaired
        True when the JSON needed json-repair.
    reasoning
        True when the schedule was read from a reasoning block (the answer
        outside it held none).
    """

    values: dict[str, float]
    kind: TimingKind
    problems: tuple[Violation, ...] = ()
    repaired: bool = False
    reasoning: bool = False


def _read_as_time(raw: Any, lenient: bool) -> bool:
    """Whether a value under a key that is no step counts as a timing (not commentary)."""
    return time_like(raw) if lenient else read_number(raw) is not None


def _timing(raw: Any, kind: TimingKind, lenient: bool = False) -> tuple[TimingKind, Any, bool] | None:
    """(kind, raw value, named by a timing key) of a map value, or None when it is no timing at all.

    ``lenient`` (looking for why no schedule was read) takes any flat value as a timing
    (``[0, 4.8]``, an object of scalars without a timing key; not ``[]``).
    """
    items = _items(raw)
    flat = lenient and bool(items) and not any(isinstance(v, dict | list) for v in items)
    if isinstance(raw, dict):
        for found, keys in _TIMING_KEYS:
            for key in keys:
                if key in raw:
                    return found, raw[key], True
        return (kind, raw, False) if flat else None
    if isinstance(raw, list) and not flat:
        return None
    return kind, raw, False


def _items(raw: Any) -> list[Any]:
    return list(raw.values()) if isinstance(raw, dict) else raw if isinstance(raw, list) else []


def _entry(item: Any, steps: Collection[str]) -> tuple[str, TimingKind, Any, bool] | None:
    """(step, kind, raw value, named by a timing key) of a list item; None if it names no step and time."""
    if isinstance(item, list) and len(item) == 2 and is_id(item[0]):
        if isinstance(item[0], str) or not steps or str(item[0]) in steps:
            return str(item[0]), "start", item[1], False
        return None
    step = step_of(item)
    timing = _timing(item, "start") if step is not None else None
    if step is None or timing is None:
        return None
    return step, *timing


class _Collector:
    """Builds a :class:`Parsed` from (step, kind, raw) triples, noting every problem.

    A timing for an id that is no step of the workflow (when its steps are
    known) is left out of the values and named in one ``unknown`` reason.
    """

    def __init__(self, duplicates: Collection[str] = (), steps: Collection[str] = ()) -> None:
        self.values: dict[str, float] = {}
        self.kinds: set[TimingKind] = set()
        self.problems: list[Violation] = []
        self.seen: set[str] = set()
        self.duplicates = duplicates
        self.steps = steps
        self.unknown: list[str] = []

    def add(self, step: str, kind: TimingKind, raw: Any) -> None:
        if self.steps and step not in self.steps:
            if step not in self.unknown:
                self.unknown.append(step)
            return
        if step in self.seen or step in self.duplicates:
            if step not in {t for p in self.problems if p.kind == "duplicate" for t in p.tasks}:
                self.problems.append(
                    Violation(kind="duplicate", message=f"step {step!r} is given twice", tasks=(step,))
                )
            self.values.pop(step, None)
            return
        self.seen.add(step)
        self.kinds.add(kind)
        value = read_number(raw)
        if value is None:
            what = "start" if kind == "start" else "requested delay"
            self.problems.append(reasons.bad_value(step, what, raw, unread_unit(raw)))
        else:
            self.values[step] = value

    @property
    def size(self) -> int:
        """How many entries were given (read or not)."""
        return len(self.seen) + len(self.unknown)

    def result(self) -> Parsed:
        problems = list(self.problems)
        if self.unknown:
            problems.insert(0, reasons.unknown_ids(self.unknown, self.steps))
        if len(self.kinds) > 1:
            problems.append(
                Violation(kind="parse", message="the schedule mixes start times and requested delays")
            )
        kind: TimingKind = "delay" if self.kinds == {"delay"} else "start"
        return Parsed(self.values, kind, tuple(problems))


def _accept(
    node: Any, key: str | None, steps: Collection[str], duplicates: Collection[str], lenient: bool = False
) -> Parsed | None:
    """Read ``node`` as a schedule, if it is one.

    ``lenient`` looks for why an answer holds no schedule: a map whose keys
    are no steps but whose values are written as times, or one whose steps
    have only values that are not read, is then a (faulty) schedule.
    """
    collector, explicit = _Collector(duplicates, steps), False
    single = _entry(node, steps)
    if single is not None or isinstance(node, list):
        collector.duplicates = ()  # a list repeats keys across its objects; only steps count
        for entry in (single,) if single is not None else (_entry(item, steps) for item in node):
            if entry is not None:
                collector.add(*entry[:3])
                explicit = explicit or entry[3]
    elif isinstance(node, dict):
        if steps and not lenient and not any(step in steps for step in node):
            return None  # no step of the workflow: another map (resources, notes...)
        default: TimingKind = "delay" if key is not None and key.lower() in DELAY_WRAPPERS else "start"
        for step, raw in node.items():
            timing = _timing(raw, default, lenient and step in steps)
            if timing is None or (step in SUMMARY_KEYS and step not in steps):
                continue
            if steps and step not in steps and not _read_as_time(timing[1], lenient):
                continue  # text under a key that is no step: commentary
            collector.add(step, timing[0], timing[1])
            explicit = explicit or timing[2]
    if lenient:
        return collector.result() if _faulty(collector, steps) else None
    if not collector.values and not (explicit and collector.size > len(collector.unknown)):
        return None  # only text where times would be: descriptions or edges, not a schedule
    return collector.result()


def _faulty(collector: _Collector, steps: Collection[str]) -> bool:
    """Whether what a lenient reading collected is a schedule gone wrong, not some other map.

    Its steps' values are not read, or at least half the workflow's steps
    (two at least) are given under ids that are none of them.
    """
    if collector.values:
        return False  # a reading with values is found by the strict reading, or is no schedule
    if collector.problems:
        return True
    return len(collector.unknown) >= min(len(steps), max(2, math.ceil(len(steps) / 2)))


def _not_starts(key: str, steps: Collection[str]) -> bool:
    """Whether ``key`` (not a step) holds something else than starts: other times, dependencies."""
    if key in steps:
        return False
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).lower()
    return spaced in DEPENDENCY_KEYS or not OTHER_TIMES.isdisjoint(_WORDS.split(spaced))


def schedule_readings(
    value: Any, steps: Collection[str] = (), duplicates: Collection[str] = (), lenient: bool = False
) -> list[tuple[Parsed, bool]]:
    """Every part of a decoded value that reads as a schedule, and whether it sits under a *final* key.

    ``lenient``: the parts that read as a schedule gone wrong (see ``_accept``), to say why
    a value holds no schedule.
    """
    found = find_parts(
        value,
        lambda node, key: _accept(node, key, steps, duplicates, lenient),
        WRAPPERS + DELAY_WRAPPERS,
        skip=lambda key: _not_starts(key, steps),
    )
    return [(parsed, under_final_key(path)) for parsed, path in found]


def _key(parsed: Parsed) -> Hashable:
    return parsed.kind, tuple(sorted(parsed.values.items())), parsed.problems


def _parts(parsed: Parsed) -> frozenset[Hashable]:
    return frozenset((parsed.kind, step, value) for step, value in parsed.values.items())


def _as_read(parsed: Parsed, span: Decoded, reasoning: bool) -> Parsed:
    """``parsed`` as read from ``span``: JSON left open ends the reading with that one reason."""
    # what a cut leaves of the last value ('' of "8.5", a half key) is the cut's doing: one reason
    problems = parsed.problems
    if span.unclosed:
        problems = (reasons.unclosed(span.unclosed),)
    elif span.truncated:
        problems = (reasons.truncated(),)
    return replace(parsed, problems=problems, repaired=span.repaired, reasoning=reasoning)


def _chosen(readings: list[Reading[Parsed]], text: str, reasoning: bool) -> Parsed | Violation:
    chosen = choose_reading(readings, text, _key, _parts)
    if isinstance(chosen, Ambiguous):
        return Violation(kind="ambiguous", message=chosen.message("schedules"))
    return _as_read(chosen.value, chosen.span, reasoning)


def _faultiest(readings: list[Reading[Parsed]], reasoning: bool) -> Parsed | None:
    """Of the lenient readings, the one with the most entries (the first of those): why none was read."""
    if not readings:
        return None
    best = max(readings, key=lambda r: len(r.value.values) + sum(len(p.tasks) for p in r.value.problems))
    return _as_read(best.value, best.span, reasoning)


def parse_starts(
    value: Any, steps: Collection[str] = (), duplicates: Collection[str] = ()
) -> Parsed | Violation | None:
    """Interpret a decoded JSON value (a record's ``starts``) as a schedule.

    Parameters
    ----------
    value
        The value; every part of it that is a schedule is read.
    steps
        The workflow's step ids, if known (helps to skip commentary keys).
    duplicates
        Keys the source text repeats in one object (the decoded value lost all but one).

    Returns
    -------
    Parsed, Violation or None
        The schedule; an ``ambiguous`` violation when the value holds several
        different ones and no ``final_*`` key picks one; a schedule gone
        wrong, with its problems, when no part is read but one gives times
        for unknown ids or values that are not read; None when no part of
        ``value`` is a schedule.
    """
    span = Decoded(value, 0, 0)
    readings = [Reading(p, span, final) for p, final in schedule_readings(value, steps, duplicates)]
    if readings:
        return _chosen(readings, "", False)
    faulty = [Reading(p, span, final) for p, final in schedule_readings(value, steps, duplicates, True)]
    return _faultiest(faulty, False)


def _decoded_readings(
    decoded: list[Decoded], steps: Collection[str], lenient: bool = False
) -> list[Reading[Parsed]]:
    # spans of equal text share their value: read each value once
    memo: dict[tuple[int, frozenset[str]], list[tuple[Parsed, bool]]] = {}
    readings: list[Reading[Parsed]] = []
    for candidate in decoded:
        key = (id(candidate.value), candidate.duplicates)
        if key not in memo:
            memo[key] = schedule_readings(candidate.value, steps, candidate.duplicates, lenient)
        readings.extend(Reading(parsed, candidate, final) for parsed, final in memo[key])
    return readings


def parse_response(text: str, steps: Collection[str] = ()) -> Parsed | Violation:
    """Extract a schedule from an LLM's raw answer.

    Parameters
    ----------
    text
        The raw response: prose, code fences, reasoning blocks, possibly broken JSON.
    steps
        The workflow's step ids, if known.

    Returns
    -------
    Parsed or Violation
        The schedule the answer gives (see :mod:`peakopt.oracle.answers.answer`), or
        a violation saying why there is none: ``parse`` (no JSON, no
        schedule), ``ambiguous`` (several, none marked final). When no part
        of the JSON reads as a schedule but one is a schedule gone wrong
        (times under ids that are no steps, steps whose values are not
        read), that one is returned with its problems
        (:mod:`peakopt.oracle.answers.reasons`), so that the reason names the cause.
    """
    if not text.strip():
        return reasons.empty()
    parts = split_reasoning(text)
    seen: list[tuple[list[Decoded], bool]] = []
    for part, reasoning in ((parts.answer, False), (parts.reasoning, True)):
        decoded = find_json(part, naming(steps))
        seen.append((decoded, reasoning))
        readings = _decoded_readings(decoded, steps)
        if readings:
            return _chosen(readings, part, reasoning)
    for decoded, reasoning in seen:
        faulty = _faultiest(_decoded_readings(decoded, steps, lenient=True), reasoning)
        if faulty is not None:
            return faulty
    if not any(decoded for decoded, _ in seen):
        return reasons.no_json(text)
    return reasons.holds_none("schedule", "step -> start, or a list of {id, start}")
