"""How a task's duration and demand vary from run to run: the ``varies`` field of a task.

A task's ``duration``/``demand`` (or ``profile``) are its *nominal* figures, the ones a plan is
made with; ``varies`` says how a real run departs from them. Four distributions, each a JSON
object with a ``kind``:

- ``uniform``: ``{"kind": "uniform", "spread": 0.1}``, uniform within ±10 % of the nominal
  value (PeakBench's perturbation protocol), ``spread`` in [0, 1);
- ``triangular``: ``{"kind": "triangular", "p10": 2, "p50": 3, "p90": 5}``, the triangular
  distribution whose 10th, 50th and 90th percentiles are these (fitted exactly, see
  :class:`Triangular`);
- ``lognormal``: the same three percentiles, fitted to a lognormal (see :class:`Lognormal`);
- ``empirical``: ``{"kind": "empirical", "samples": [2.8, 3.1, 4.0]}``, one of the measured
  values, each equally likely (a bootstrap of a profile's runs).

Units: a **duration**'s percentiles and samples are seconds of the task's whole run (what a
profiler measures; a piecewise profile's segments are scaled in proportion). A **demand**'s are
multipliers of every nominal demand of the task (``p50: 1.0`` is the nominal demand), since a
task demands several resources in different units; one multiplier scales them together. A
``uniform`` spread is relative to the nominal value in both cases.

What can be drawn is bounded: the sampler draws uniforms in ``[2**-54, 1 - 2**-53]``
(:func:`peakopt.oracle.uncertain.scenarios.uniforms`), so a distribution's largest draw is its quantile at
``1 - 2**-53`` (:data:`U_HIGH`), finite for every kind. A task is refused when that largest draw,
for the nominal values it varies, exceeds :data:`MAX_DRAW`: its duration in seconds, its demand
multiplier, or the multiplier times the task's largest nominal demand. Then every realised
workflow of fewer than 10**8 tasks has a finite total run time, its makespans, means, variances
and gaps are finite floats, and no figure is computed from an overflow.

Pure Python: ``peakopt validate`` reads these models and must not load NumPy. The vectorised
draws live in :mod:`peakopt.oracle.uncertain.scenarios`.
"""

from __future__ import annotations

import math
import sys
from functools import cached_property
from typing import Annotated, Literal

from pydantic import Field, model_validator

from peakopt.models.base import FROZEN, Cached, NonNegative

#: z-score of the 90th percentile of a standard normal.
Z90 = 1.2815515655446004
#: Percentiles' tolerance: a fitted triangular's lower end this far below 0 is 0 (float rounding).
_SLACK = 1e-12
#: Bisection steps of the triangular fit: the mode's position to 2**-60.
_STEPS = 60
#: The largest value a draw may take: a duration in seconds, a demand multiplier, a realised
#: demand (see the module docstring). Far beyond any run time (3e92 years), and small enough that
#: sums over 10**8 tasks and squares of sums (variances) stay finite floats.
MAX_DRAW = 1e100
#: The largest uniform the sampler draws: every quantile is finite there.
U_HIGH = 1 - 2.0**-53
#: The standard normal's quantile at :data:`U_HIGH` (``scipy.special.ndtri(U_HIGH)``, pure Python here).
Z_HIGH = 8.209536151601387


def _beyond(top: float) -> str:
    return "values past the largest float" if not math.isfinite(top) else f"{top:.3g}"


def drawable(top: float, what: str) -> None:
    """Refuse a largest draw ``top`` above :data:`MAX_DRAW` (or not a number).

    Raises
    ------
    ValueError
        Naming ``what`` was drawn, the largest draw and the rule.
    """
    if not top <= MAX_DRAW:
        raise ValueError(
            f"{what} can draw {_beyond(top)}, above {MAX_DRAW:g}, the largest value a draw may take "
            "(its quantile at the sampler's largest uniform, 1 - 2**-53; see docs/uncertainty.md)"
        )


def _largest(value: float) -> float:
    return value if math.isfinite(value) else math.inf


class Uniform(Cached):
    """Uniform within ±``spread`` of the nominal value (a relative spread).

    Parameters
    ----------
    spread
        Relative half-width, in [0, 1): ``0.1`` is ±10 %.
    """

    model_config = FROZEN

    kind: Literal["uniform"]
    spread: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False, strict=True)]

    def support(self, nominal: float) -> tuple[float, float]:
        """The smallest and largest value a draw can take, for a nominal value."""
        return nominal * (1 - self.spread), nominal * (1 + self.spread)

    def largest(self, nominal: float) -> float:
        """The largest value the sampler can draw, for a nominal value."""
        return _largest(nominal * (1 + self.spread))


class _Percentiles(Cached):
    """Three percentiles, ``p10 <= p50 <= p90``, all >= 0."""

    model_config = FROZEN

    kind: str  # each distribution's own literal: declared here so that it is dumped first
    p10: NonNegative
    p50: NonNegative
    p90: NonNegative

    @model_validator(mode="after")
    def _ordered(self) -> _Percentiles:
        if not self.p10 <= self.p50 <= self.p90:
            raise ValueError(
                f"needs p10 <= p50 <= p90, got p10={self.p10:g}, p50={self.p50:g}, p90={self.p90:g}"
            )
        return self


def unit_triangular_quantile(p: float, mode: float) -> float:
    """The ``p``-quantile of the triangular distribution on [0, 1] with its mode at ``mode``."""
    if p <= mode:
        return math.sqrt(p * mode)
    return 1 - math.sqrt((1 - p) * (1 - mode))


def _ratio(mode: float) -> float:
    q10, q50, q90 = (unit_triangular_quantile(p, mode) for p in (0.1, 0.5, 0.9))
    return (q50 - q10) / (q90 - q10)


#: Where the median can sit between p10 and p90 in a triangular distribution, as a share of
#: ``p90 - p10``: from a mode at the lower end to a mode at the upper end.
TRIANGULAR_RATIOS = (_ratio(0.0), _ratio(1.0))


class Triangular(_Percentiles):
    """The triangular distribution with these 10th, 50th and 90th percentiles.

    Three percentiles fix a triangle's three parameters (lower end ``low``, mode, upper end
    ``high``) exactly: the mode's position follows from where p50 sits between p10 and p90
    (bisection), the ends from p10 and p90. A triangle can hold the median only between
    38.2 % and 61.8 % of the way from p10 to p90 (:data:`TRIANGULAR_RATIOS`), and its lower end
    must not be below 0; other percentiles are refused (a lognormal takes any).

    Parameters
    ----------
    p10, p50, p90
        Seconds for a duration, multipliers for a demand.
    """

    kind: Literal["triangular"]

    @model_validator(mode="after")
    def _fits(self) -> Triangular:
        if self.p90 > self.p10:
            share = (self.p50 - self.p10) / (self.p90 - self.p10)
            low, high = TRIANGULAR_RATIOS
            if not low - _SLACK <= share <= high + _SLACK:
                raise ValueError(
                    f"no triangular distribution has p10={self.p10:g}, p50={self.p50:g}, "
                    f"p90={self.p90:g}: p50 must lie {low:.1%} to {high:.1%} of the way from p10 "
                    "to p90 (use a lognormal)"
                )
            low = self._triangle()[0]
            if low < -_SLACK * max(1.0, self.p90):
                raise ValueError(
                    f"the triangular distribution with p10={self.p10:g}, p50={self.p50:g}, "
                    f"p90={self.p90:g} starts below 0 (at {low:.3g}); a value cannot be negative"
                )
        drawable(self.largest(1.0), f"the triangular distribution with p90={self.p90:g}")
        return self

    def largest(self, nominal: float) -> float:
        """The fitted triangle's upper end."""
        return _largest(self.fit[2])

    @cached_property
    def fit(self) -> tuple[float, float, float]:
        """``(low, mode, high)`` of the fitted triangle (all ``p50`` when p10 == p90)."""
        if self.p90 == self.p10:
            return self.p50, self.p50, self.p50
        low, mode, high = self._triangle()
        return max(0.0, low), max(0.0, mode), max(0.0, high)

    def _triangle(self) -> tuple[float, float, float]:
        share = (self.p50 - self.p10) / (self.p90 - self.p10)
        lo, hi = 0.0, 1.0  # _ratio rises with the mode's position
        for _ in range(_STEPS):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _ratio(mid) < share else (lo, mid)
        mode = (lo + hi) / 2
        q10, q90 = unit_triangular_quantile(0.1, mode), unit_triangular_quantile(0.9, mode)
        width = (self.p90 - self.p10) / (q90 - q10)
        low = self.p10 - q10 * width
        return low, low + mode * width, low + width

    def support(self, nominal: float) -> tuple[float, float]:
        """The fitted triangle's ends (the nominal value plays no part)."""
        return self.fit[0], self.fit[2]


class Lognormal(_Percentiles):
    """A lognormal distribution fitted to these 10th, 50th and 90th percentiles.

    Two parameters cannot meet three percentiles in general; the fit keeps the median exact
    (``mu = ln p50``) and the ratio p90 / p10 exact (``sigma = ln(p90 / p10) / (2 z90)``, also
    the least-squares sigma in log space). p10 and p90 themselves are then met only when they
    are symmetric around the median in log space (``p10 * p90 == p50**2``); otherwise both move
    by the same factor ``p50 / sqrt(p10 * p90)``.

    Parameters
    ----------
    p10, p50, p90
        Seconds for a duration, multipliers for a demand; p10 above 0.
    """

    kind: Literal["lognormal"]

    @model_validator(mode="after")
    def _positive(self) -> Lognormal:
        if self.p10 <= 0:
            raise ValueError(f"needs p10 > 0 (a lognormal is positive), got p10={self.p10:g}")
        drawable(
            self.largest(1.0),
            f"the lognormal distribution with p10={self.p10:g}, p50={self.p50:g}, p90={self.p90:g}",
        )
        return self

    def largest(self, nominal: float) -> float:
        """Its quantile at :data:`U_HIGH`, as the sampler computes it (inf past the float range)."""
        ratio = self.p90 / self.p10
        # sigma in logs where p90 / p10 overflows (p10 subnormal): too wide to draw finitely anyway
        spread = self.sigma if math.isfinite(ratio) else (math.log(self.p90) - math.log(self.p10)) / (2 * Z90)
        top = self.mu + spread * Z_HIGH
        return math.exp(top) if top < math.log(sys.float_info.max) else math.inf

    @property
    def mu(self) -> float:
        """Mean of the logarithm."""
        return math.log(self.p50)

    @property
    def sigma(self) -> float:
        """Standard deviation of the logarithm."""
        return math.log(self.p90 / self.p10) / (2 * Z90)

    def support(self, nominal: float) -> tuple[float, float]:
        """``(0, inf)``, or the median alone when sigma is 0."""
        return (self.p50, self.p50) if self.sigma == 0 else (0.0, math.inf)


class Empirical(Cached):
    """One of measured values, each equally likely.

    Parameters
    ----------
    samples
        At least one finite value >= 0: seconds for a duration, multipliers for a demand.
    """

    model_config = FROZEN

    kind: Literal["empirical"]
    samples: tuple[NonNegative, ...] = Field(min_length=1)

    def support(self, nominal: float) -> tuple[float, float]:
        """The smallest and largest sample."""
        return min(self.samples), max(self.samples)

    def largest(self, nominal: float) -> float:
        """The largest sample."""
        return max(self.samples)

    @model_validator(mode="after")
    def _drawable(self) -> Empirical:
        drawable(self.largest(1.0), "the empirical distribution")
        return self


#: One of the distributions, told apart by ``kind``.
Distribution = Annotated[Uniform | Triangular | Lognormal | Empirical, Field(discriminator="kind")]
#: The names of the distributions (the values of ``kind``).
DISTRIBUTIONS = ("uniform", "triangular", "lognormal", "empirical")


class Varies(Cached):
    """How a task's run departs from its nominal duration and demand.

    Parameters
    ----------
    duration
        Distribution of the task's whole run time (seconds; ``uniform`` relative); a profile's
        segments are scaled in proportion. None: the duration is fixed.
    demand
        Distribution of one multiplier applied to every demand of the task (``uniform``
        relative to 1). None: demands are fixed.
    """

    model_config = FROZEN

    duration: Distribution | None = None
    demand: Distribution | None = None

    @model_validator(mode="after")
    def _something(self) -> Varies:
        if self.duration is None and self.demand is None:
            raise ValueError("'varies' gives neither 'duration' nor 'demand'; give one or leave it out")
        return self


def is_fixed(distribution: Distribution | None) -> bool:
    """Whether every draw of ``distribution`` is the nominal value (none, or a spread of 0)."""
    return distribution is None or (isinstance(distribution, Uniform) and distribution.spread == 0)


def check_draws(varies: Varies, length: float, peak: float) -> None:
    """Refuse a task's ``varies`` whose largest draw exceeds :data:`MAX_DRAW` (the module's rule).

    Parameters
    ----------
    varies
        The task's distributions.
    length
        Its nominal run time in seconds (what a ``uniform`` duration is relative to).
    peak
        Its largest nominal demand (what a demand multiplier scales).

    Raises
    ------
    ValueError
        Naming the field, the largest draw and the rule.
    """
    duration, demand = varies.duration, varies.demand
    if duration is not None and not is_fixed(duration):
        drawable(duration.largest(length), f"'varies.duration' ({duration.kind}, nominal {length:g} s)")
    if demand is not None and not is_fixed(demand):
        multiplier = demand.largest(1.0)
        drawable(multiplier, f"'varies.demand' ({demand.kind}, a multiplier)")
        drawable(multiplier * peak, f"'varies.demand' ({demand.kind}) times the largest demand, {peak:g},")
