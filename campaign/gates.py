"""What makes a campaign fail: thresholds on its summary (``--fail-on``), and rows that all failed.

A threshold is ``FIELD OP NUMBER[%]``, e.g. ``gap_mean>5%`` or ``safe_rate<0.99``: the
run fails when a group of the summary has ``FIELD OP NUMBER``. ``OP`` is one of ``>``,
``>=``, ``<``, ``<=``; ``%`` divides the number by 100. The fields are the summary's
numbers, nested ones joined by ``_`` (``gap_mean``, ``gap_p95``, ``gap_vs_lb_max``,
``safe_rate``, ``errors``, ``invalid``, ``records``...). A group without the figure (no
safe row with a proven optimum has no ``gap_mean``) fails the threshold: a gate must not
pass on data it does not have.
"""

from __future__ import annotations

import math
import operator
import re
import types
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel

from peakopt.campaign.stress import ERROR
from peakopt.oracle import ScoreRow

#: Crossings (or failure reasons) spelt out in the one ``Error:`` line; the rest are counted.
SHOWN = 5

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}

_SYNTAX = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|>|<)\s*([^%\s]+)\s*(%?)\s*")


def _numeric(annotation: Any) -> type[BaseModel] | bool:
    """A nested model type, True for a number, False for anything else (``X | None`` as ``X``)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = kinds[0] if len(kinds) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return annotation in (int, float)


def summary_fields(model: type[BaseModel]) -> dict[str, tuple[str, ...]]:
    """The threshold names of a summary model's numbers, with their path in ``model_dump()``."""
    fields: dict[str, tuple[str, ...]] = {}
    for name, info in model.model_fields.items():
        kind = _numeric(info.annotation)
        if isinstance(kind, type):
            for inner, path in summary_fields(kind).items():
                fields[f"{name}_{inner}"] = (name, *path)
        elif kind:
            fields[name] = (name,)
    return fields


@dataclass(frozen=True)
class Threshold:
    """One ``--fail-on`` condition: the run fails when ``field op value`` holds."""

    text: str
    field: str
    path: tuple[str, ...]
    op: str
    value: float
    percent: bool

    @classmethod
    def parse(cls, text: str, fields: dict[str, tuple[str, ...]]) -> Threshold:
        """Read ``FIELD OP NUMBER[%]``.

        Raises
        ------
        ValueError
            Bad syntax, an unknown field or a number that is not finite.
        """
        match = _SYNTAX.fullmatch(text)
        if match is None:
            raise ValueError(f"{text!r}: expected FIELD OP NUMBER[%], e.g. 'gap_mean>5%'")
        field, op, number, percent = match.groups()
        if field not in fields:
            raise ValueError(f"{text!r}: unknown field {field!r}; choose from {', '.join(fields)}")
        try:
            value = Decimal(number)
        except InvalidOperation:
            raise ValueError(f"{text!r}: {number!r} is not a number") from None
        scaled = float(value / 100 if percent else value) if value.is_finite() else math.inf
        if not math.isfinite(scaled):
            raise ValueError(f"{text!r}: the number must be finite")
        return cls(text.strip(), field, fields[field], op, scaled, bool(percent))

    def crossed(self, summary: BaseModel) -> str | None:
        """Why ``summary`` crosses the threshold, or None when it does not."""
        found: Any = summary.model_dump()
        for key in self.path:
            found = found.get(key) if isinstance(found, dict) else None
        if found is None:
            return f"no {self.field}"
        if OPERATORS[self.op](float(found), self.value):
            return f"{self.field} {_show(float(found), self.percent)}"
        return None


def _show(value: float, percent: bool) -> str:
    return f"{100 * value:.4g}%" if percent and math.isfinite(value) else f"{value:.6g}"


def crossings(
    thresholds: Sequence[Threshold], summaries: Sequence[BaseModel], label: Callable[[Any], str]
) -> str:
    """What crosses the thresholds, e.g. ``gap_mean>5%: serial has gap_mean 40.6%``; "" if nothing.

    At most :data:`SHOWN` crossings are spelt out, then how many more there are.
    """
    return _first(
        f"{threshold.text}: {label(summary)} has {why}"
        for threshold in thresholds
        for summary in summaries
        if (why := threshold.crossed(summary)) is not None
    )


def error_reasons(rows: Sequence[ScoreRow]) -> list[tuple[str, str, int]]:
    """(method, reason, rows) of the failed runs (reason kind ``error``), most frequent first."""
    counts = Counter(
        (row.source or "-", reason)
        for row in rows
        for reason, kind in zip(row.reasons, row.reason_kinds, strict=False)
        if kind == ERROR
    )
    return [(method, reason, n) for (method, reason), n in counts.most_common()]


def all_failed(rows: Sequence[ScoreRow]) -> str | None:
    """When every row is a failed run, the message saying so with the reasons; else None."""
    if not rows or not all(ERROR in row.reason_kinds for row in rows):
        return None
    reasons = error_reasons(rows)
    count = f"{len(rows)} row" + ("s" if len(rows) > 1 else "")
    return f"every row failed ({count}): {_first(f'{m}: {n} × {why}' for m, why, n in reasons)}"


def _first(messages: Iterable[str], shown: int = SHOWN) -> str:
    """The first ``shown`` messages, ``; ``-joined, and how many more there are."""
    found = list(messages)
    more = f"; and {len(found) - shown} more" if len(found) > shown else ""
    return "; ".join(found[:shown]) + more
