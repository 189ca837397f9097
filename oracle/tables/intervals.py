"""Seeded bootstrap confidence intervals for the means the oracle reports.

A benchmark's table of means says nothing about how much a mean would move on
another draw of workflows; the interval does. peakopt uses scipy's bootstrap
(:func:`scipy.stats.bootstrap`) with the percentile method by default:

- it is what a reader can check by hand (the interval is the ``(1 - level) / 2``
  and ``(1 + level) / 2`` quantiles of the resampled means);
- BCa, scipy's default, has no answer on the degenerate samples a benchmark
  produces all the time (every answer optimal: every value 1.0) and warns.

A sample whose values are all equal has that value as its interval (every
resample has that mean, so this is exact, not a fallback); a sample of one
value has no interval (None): one observation says nothing about its spread.
The resampling is seeded, so the same rows always give the same interval.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

#: The resampling methods of :func:`scipy.stats.bootstrap` a caller may pick.
BootstrapMethod = Literal["percentile", "basic", "BCa"]
LEVEL = 0.95
RESAMPLES = 9999
BOOTSTRAP_SEED = 0
# Resampled means are computed a batch at a time, so memory stays near this
# many floats whatever the sample size (10,000 values x 9,999 resamples at once
# would need 800 MB).
_BATCH_FLOATS = 4_000_000


class Interval(BaseModel):
    """A confidence interval for a mean.

    Attributes
    ----------
    low, high
        Its bounds.
    level
        Its confidence level (0.95).
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    low: float
    high: float
    level: float = LEVEL


def mean_interval(
    values: Iterable[float | None],
    *,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    method: BootstrapMethod = "percentile",
) -> Interval | None:
    """The bootstrap confidence interval of the mean of the values that are not None.

    Parameters
    ----------
    values
        The sample; None entries are left out (as in the oracle's means).
    level
        Confidence level, in (0, 1).
    resamples
        Number of bootstrap resamples.
    seed
        Seed of the resampling: the same values and seed give the same interval.
    method
        ``percentile`` (default), ``basic`` or ``BCa``.

    Returns
    -------
    Interval or None
        None for fewer than two values.

    Raises
    ------
    ValueError
        On a level outside (0, 1) or fewer than one resample.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    sample = [float(v) for v in values if v is not None]
    if len(sample) < 2:
        return None
    if min(sample) == max(sample):
        return Interval(low=sample[0], high=sample[0], level=level)
    # scipy (and NumPy behind it) load here, not when the oracle is imported.
    import numpy as np
    from scipy.stats import bootstrap

    result = bootstrap(
        (np.asarray(sample),),
        np.mean,
        confidence_level=level,
        n_resamples=resamples,
        method=method,
        batch=max(1, _BATCH_FLOATS // len(sample)),
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    low, high = (float(bound) for bound in result.confidence_interval)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None  # BCa on a sample it cannot handle (scipy warns)
    # Rounding in the resampled means can put a bound a hair outside the
    # sample's range; a mean never leaves it.
    return Interval(low=max(low, min(sample)), high=min(high, max(sample)), level=level)
