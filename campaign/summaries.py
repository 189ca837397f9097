"""The per-group summary of score rows that ``peakopt report`` and ``peakopt stress`` print and gate on.

A :class:`MethodSummary` is the oracle's :class:`~peakopt.oracle.tables.aggregate.ScoreSummary`
with the count of the campaign's failed runs (rows of reason kind
:data:`~peakopt.campaign.stress.ERROR`); ``--fail-on`` thresholds
(:mod:`peakopt.campaign.gates`) are read against its fields.
"""

from __future__ import annotations

from collections.abc import Sequence

from peakopt.campaign.stress import ERROR
from peakopt.oracle import ScoreRow, aggregate
from peakopt.oracle.tables.aggregate import ScoreSummary
from peakopt.oracle.tables.pairs import with_settings


class MethodSummary(ScoreSummary):
    """:class:`~peakopt.oracle.tables.aggregate.ScoreSummary` and the count of failed runs (``error``)."""

    errors: int


def summaries(rows: Sequence[ScoreRow], by: Sequence[str] = ("source",)) -> list[MethodSummary]:
    """Aggregates per group (``by``: fields of a score row), by :func:`peakopt.oracle.aggregate`.

    Rows judged under different settings (prompt setting, noise, samples, execution) are never
    merged: every setting they differ in is grouped by too
    (:func:`~peakopt.oracle.tables.pairs.with_settings`).
    """
    return [
        MethodSummary(**summary.model_dump(), errors=summary.invalid_reasons.get(ERROR, 0))
        for summary in aggregate(rows, with_settings(rows, by), intervals=True)
    ]
