"""A leaderboard of sources (models, heuristics) and their paired differences.

Sources are ranked by the mean of one per-pair value (efficiency, the design's
headline number), each mean with its bootstrap interval
(:func:`~peakopt.oracle.tables.intervals.mean_interval`). Two sources are compared on
the pairs both answered only, pair by pair: the paired difference removes what
the pairs themselves contribute (a hard workflow is hard for everyone), so its
interval is far narrower than the two means' intervals suggest.

A source may answer a pair more than once (Inspect's epochs, repeated runs):
its value on that pair is the mean of those answers, so every pair weighs the
same in the means and the differences.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from statistics import fmean
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from peakopt.oracle.tables.intervals import BOOTSTRAP_SEED, RESAMPLES, Interval, mean_interval
from peakopt.oracle.tables.pairs import PAIR_KEYS, PairId, question_keys, question_means
from peakopt.oracle.tables.rows import ScoreRow

T = TypeVar("T")

#: Per source, per pair, one value.
Values = Mapping[str, Mapping[PairId, float]]


class Standing(BaseModel):
    """One source's place on the leaderboard."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    rank: int
    source: str
    pairs: int
    mean: float
    interval: Interval | None


class Difference(BaseModel):
    """``better`` minus ``worse`` on the pairs both answered, with its interval."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    better: str
    worse: str
    pairs: int
    mean: float | None
    interval: Interval | None


def by_pair(
    rows: Iterable[ScoreRow], value: Callable[[ScoreRow], float | None], keys: Sequence[str] = PAIR_KEYS
) -> dict[str, dict[PairId, float]]:
    """Per source, per pair, the mean of ``value`` over that source's rows of the pair.

    Rows whose value is None are left out (a pair with no defined value is not
    one the source is compared on); a row without a source counts as ``-``.
    See :func:`~peakopt.oracle.tables.pairs.question_means`.
    """
    sources: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        sources[row.source or "-"].append(row)
    found = {source: question_means(own, value, keys) for source, own in sources.items()}
    return {source: pairs for source, pairs in found.items() if pairs}


def standings(values: Values, *, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[Standing]:
    """The sources ranked by mean value, best first (ties by name; equal means share a rank)."""
    means = {source: fmean(pairs.values()) for source, pairs in values.items() if pairs}
    order = sorted(means, key=lambda source: (-means[source], source))
    ranked: list[Standing] = []
    for place, source in enumerate(order, start=1):
        tied = ranked and ranked[-1].mean == means[source]
        ranked.append(
            Standing(
                rank=ranked[-1].rank if tied else place,
                source=source,
                pairs=len(values[source]),
                mean=means[source],
                interval=mean_interval(values[source].values(), resamples=resamples, seed=seed),
            )
        )
    return ranked


def differences(
    values: Values, ranked: Sequence[Standing], *, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[Difference]:
    """Every pair of ranked sources, the better first, compared on their common pairs."""
    compared: list[Difference] = []
    for better, worse in combinations(ranked, 2):
        mine, theirs = values[better.source], values[worse.source]
        common = [pair for pair in mine if pair in theirs]
        deltas = [mine[pair] - theirs[pair] for pair in common]
        compared.append(
            Difference(
                better=better.source,
                worse=worse.source,
                pairs=len(common),
                mean=fmean(deltas) if deltas else None,
                interval=mean_interval(deltas, resamples=resamples, seed=seed),
            )
        )
    return compared


class Board(BaseModel):
    """The leaderboard of some score rows: standings by efficiency and the paired differences.

    Attributes
    ----------
    metric
        The per-pair value ranked (``efficiency``).
    pair_keys
        What makes two rows answers to the same question: workflow and machine,
        and every setting the rows differ in (:func:`~peakopt.oracle.tables.pairs.question_keys`).
    standings
        The sources, best first (:func:`standings`).
    differences
        Every two sources on their common pairs (:func:`differences`).
    unranked
        The sources of the rows that have no value on any pair (no proven optimum to compare
        with), which the standings leave out; tables say so rather than drop them silently.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    metric: str = "efficiency"
    pair_keys: list[str]
    standings: list[Standing]
    differences: list[Difference]
    unranked: list[str] = Field(default_factory=list)


def board(rows: Sequence[ScoreRow]) -> Board:
    """The efficiency leaderboard of ``rows`` (one source per model or method).

    Rows without an efficiency (no proven optimum for their pair) are left out:
    such a pair ranks nobody.
    """
    keys = question_keys(rows)
    values = by_pair(rows, lambda row: row.efficiency, keys)
    ranked = standings(values)
    unranked = [source for source in dict.fromkeys(row.source or "-" for row in rows) if source not in values]
    return Board(
        pair_keys=list(keys), standings=ranked, differences=differences(values, ranked), unranked=unranked
    )


def in_rank_order(items: Sequence[T], source: Callable[[T], str | None], ranked: Board) -> list[T]:
    """``items`` ordered by their ``source``'s rank on ``ranked`` (unranked sources after, in their order).

    The order every table of a report follows, so that a model reads in the same place everywhere.
    """
    places = {s.source: place for place, s in enumerate(ranked.standings)}
    return sorted(items, key=lambda item: places.get(source(item) or "-", len(places)))
