"""What makes score rows answers to the same question, and one value per question.

A question is a workflow × machine pair (:data:`PAIR_KEYS`) under the settings it was judged in
(:data:`SETTING_KEYS`): the prompt setting of the answer and, for rows scored over sampled
scenarios, the noise on durations and on demands, the number of scenarios and the execution
policy. Each setting changes the figures (a plan judged at noise 0.3 is less often safe than at
0.1), so rows that differ in one are never averaged together as one method's (tables group by
the settings that vary, :func:`varying`). The scenarios' seed is not a setting: rows of two
seeds are two estimates of the same expectations.

Repeated answers to one question (Inspect's epochs, repeated runs) are not independent
questions: each contributes one value, the mean of its answers (:func:`question_means`). The
leaderboard ranks on those values and every bootstrap interval resamples them, so five epochs
of four pairs give the interval of four values, not twenty.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean

from peakopt.oracle.tables.rows import PlanRow, ScoreRow

#: What makes two rows answers about the same instance.
PAIR_KEYS = ("workflow", "machine")
#: What a row was judged under besides its pair (see the module docstring).
SETTING_KEYS = ("setting", "execution", "noise", "noise_demand", "samples")
#: The settings a row's Monte Carlo figures carry: the grouping name, the field of
#: :class:`~peakopt.oracle.tables.rows.MonteCarlo`.
SAMPLED_KEYS = {
    "execution": "execution",
    "noise": "noise_duration",
    "noise_demand": "noise_demand",
    "samples": "samples",
}
#: A question's identity: the values of its keys.
PairId = tuple[str | None, ...]


def group_value(row: ScoreRow | PlanRow, key: str) -> str | None:
    """A row's value for grouping by ``key``: a scalar field, a setting of its samples, else a label.

    Numbers and flags become text (``true``, ``0.7``), as the labels are; a row scored without
    samples has no execution, noise or samples (None).
    """
    if key in type(row).model_fields:
        value = getattr(row, key)
        if not isinstance(value, dict | list):
            return None if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    sampled = getattr(row, "monte_carlo", None)
    if key in SAMPLED_KEYS and sampled is not None:
        found = getattr(sampled, SAMPLED_KEYS[key])
        return None if found is None else str(found)
    return row.labels.get(key)


def varying(rows: Sequence[ScoreRow], keys: Sequence[str] = SETTING_KEYS) -> list[str]:
    """The ``keys`` whose value is not the same on every row (a setting the rows differ in)."""
    return [key for key in keys if len({group_value(row, key) for row in rows}) > 1]


def question_keys(rows: Sequence[ScoreRow]) -> tuple[str, ...]:
    """What identifies a question among ``rows``: the pair and every setting that varies."""
    return (*PAIR_KEYS, *varying(rows))


def with_settings(rows: Sequence[ScoreRow], by: Sequence[str]) -> list[str]:
    """``by`` and, after it, every setting the rows differ in: the grouping that merges none."""
    return [*by, *(key for key in varying(rows) if key not in by)]


def questions(rows: Iterable[ScoreRow], keys: Sequence[str]) -> list[PairId]:
    """Each row's question: its values of ``keys``; a row without a workflow is one of its own."""
    return [
        ("#", str(index))
        if row.workflow is None and "workflow" in keys
        else tuple(group_value(row, key) for key in keys)
        for index, row in enumerate(rows)
    ]


def means_by(ids: Sequence[PairId], values: Sequence[float | None]) -> dict[PairId, float]:
    """Per question of ``ids``, the mean of the rows' ``values`` that are not None (none: left out)."""
    collected: dict[PairId, list[float]] = defaultdict(list)
    for question, value in zip(ids, values, strict=True):
        if value is not None:
            collected[question].append(value)
    return {question: fmean(found) for question, found in collected.items()}


def question_means(
    rows: Sequence[ScoreRow], value: Callable[[ScoreRow], float | None], keys: Sequence[str]
) -> dict[PairId, float]:
    """Per question (its values of ``keys``), the mean of ``value`` over its rows.

    Rows whose value is None are left out (a question with no defined value has none). A row
    without a workflow (an answer naming none) is a question of its own.
    """
    return means_by(questions(rows, keys), [value(row) for row in rows])
