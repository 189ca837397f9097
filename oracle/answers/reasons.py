"""Why an answer cannot be scored: the kinds and messages of the reading's reasons, in one place.

The schedule reader (:mod:`peakopt.oracle.answers.parse`) and the structure reader
(:mod:`peakopt.oracle.answers.structure`) say why an answer is invalid with these, so
that a failure analysis can count causes by kind (a row's ``reason_kinds``):

- ``parse``: no text, no JSON, or JSON that holds nothing like an answer;
- ``unknown``: timings for ids that are no step of the workflow (the steps'
  tool names, another case's ids, near misses), each with the nearest known id;
- ``unit``: a timing that bears a unit peakopt does not read as seconds
  (``"0.08m"``: minutes or milliseconds?, ``"5 GB"``) or is a clock time
  (``"00:00:04.8"``), with the value;
- ``non_numeric``: a timing that is no number at all (words, null, a list) or
  not a finite one, with the value;
- ``truncated``: the text ends inside the JSON (a cut-off answer);
- ``unclosed``: the JSON is left open before its code fence closes (the
  model never closed it: nothing was cut).

An answer whose JSON is ``truncated`` or ``unclosed`` is not scored further
(:data:`UNSCORED`): its last value may be incomplete, or its shape is unknown.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Collection, Sequence
from typing import Any

from peakopt.oracle.judge.verdict import Violation

#: Kinds of reason that end the reading: nothing of such an answer is scored.
UNSCORED = frozenset({"truncated", "unclosed"})

#: Unknown ids named in one reason, and known ids listed beside them, at most.
IDS_SHOWN = 6
#: How alike an unknown id and a known one must be (difflib's ratio, case ignored) to be called near.
NEAR = 0.6

#: Units that could mean two things: refused, with the readings.
AMBIGUOUS = {"m": "minutes or milliseconds?"}
#: The units peakopt reads, as they are named in a reason.
KNOWN_UNITS = "s, ms, us, min, h"

_CLOCK = re.compile(r"^\s*[-+]?\d{1,2}(?::\d{1,2}){1,2}(?:[.,]\d+)?\s*$")


def empty() -> Violation:
    """An answer of no text at all."""
    return Violation(kind="parse", message="empty response")


def no_json(text: str) -> Violation:
    """An answer with no JSON in it, quoting its start."""
    excerpt = " ".join(text.split())
    excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "..."
    return Violation(kind="parse", message=f"no JSON in the response: {excerpt!r}")


def holds_none(what: str, expected: str = "") -> Violation:
    """JSON in which nothing reads as ``what`` (``schedule``, ``dependency structure``)."""
    shape = f" ({expected})" if expected else ""
    return Violation(kind="parse", message=f"the response's JSON holds no {what}{shape}")


def truncated() -> Violation:
    """The text ends inside the answer's JSON."""
    return Violation(
        kind="truncated",
        message="the answer is cut off inside its JSON (truncated output): its last value may be incomplete",
    )


def unclosed(closers: str) -> Violation:
    """The answer's JSON is still open where its code fence closes; ``closers`` would close it."""
    return Violation(
        kind="unclosed",
        message=f"the answer's JSON is not closed before the code fence ends ({closers!r} is missing): "
        "malformed, not cut off",
    )


def _nearest(name: str, known: Sequence[str]) -> str | None:
    lowered = {k.lower(): k for k in known}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=NEAR)
    return lowered[match[0]] if match else None


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:IDS_SHOWN])
    return shown + (f" and {len(names) - IDS_SHOWN} more" if len(names) > IDS_SHOWN else "")


def unknown_ids(ids: Sequence[str], known: Collection[str]) -> Violation:
    """Timings given for ``ids``, which are no step of the workflow (whose ids are ``known``)."""
    steps = list(known)
    named, far = [], False
    for name in ids[:IDS_SHOWN]:
        near = _nearest(name, steps)
        far = far or near is None
        named.append(f"{name!r} ({'no known id is near' if near is None else f'nearest known id: {near!r}'})")
    more = f" and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else ""
    listed = f"; the workflow's ids: {_listed(steps)}" if far else ""
    return Violation(
        kind="unknown", message=f"unknown step ids: {', '.join(named)}{more}{listed}", tasks=tuple(ids)
    )


def _shown(raw: Any) -> str:
    """A value as the answer wrote it: strings quoted, other values as JSON, cut to 60 characters."""
    if isinstance(raw, str) or (isinstance(raw, float) and not math.isfinite(raw)):
        text = repr(raw)
    else:
        try:
            text = json.dumps(raw, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def bad_value(step: str, what: str, raw: Any, unit: str | None) -> Violation:
    """Why the ``what`` (``start``, ``requested delay``) of ``step`` is not read.

    ``unit`` is the unit a numeric string bears when peakopt does not read it
    (None otherwise).
    """
    where = f"step {step!r}: {what} {_shown(raw)}"
    if isinstance(raw, str) and _CLOCK.match(raw):
        return Violation(
            kind="unit", message=f"{where} is a clock time, not a number of seconds", tasks=(step,)
        )
    if unit is not None:
        if unit.lower() in AMBIGUOUS:
            rule = f"the unit {unit!r} is ambiguous ({AMBIGUOUS[unit.lower()]}); give seconds"
        else:
            rule = f"unknown unit {unit!r} (peakopt reads {KNOWN_UNITS})"
        return Violation(kind="unit", message=f"{where}: {rule}", tasks=(step,))
    if isinstance(raw, str) or (isinstance(raw, int | float) and not isinstance(raw, bool)):
        return Violation(kind="non_numeric", message=f"{where} is not a finite number", tasks=(step,))
    return Violation(kind="non_numeric", message=f"{where} is not a number", tasks=(step,))
