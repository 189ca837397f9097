"""The stochastic RCPSP literature's protocol: its five duration distributions and its metric.

Ballestín and Leus (2009, *Production and Operations Management* 18(4), Section 3.1), following
Stork (2001), and Ashtiani, Leus and Aryanezhad (2011) after them, draw every activity's duration
with the deterministic duration ``d`` as its mean, from one of five distributions:

===== ====================================== ============
name  distribution                           variance
===== ====================================== ============
U1    continuous uniform on [d − √d, d + √d] d / 3
U2    continuous uniform on [0, 2d]          d² / 3
Exp   exponential with mean d                d²
B1    beta on [d/2, 2d] with variance d / 3  d / 3
B2    beta on [d/2, 2d] with variance d² / 3 d² / 3
===== ====================================== ============

U1 and B1, and U2 and B2, share a variance. A beta on [d/2, 2d] with mean d has its mean a
third of the way along its support, so its shape parameters are (α, 2α); its variance is then
d² / (2 (3α + 1)), which gives α = d/2 − 1/3 for B1 and α = 1/6 for B2 (at d = 1 the two are
one distribution). The variances are in the instance's own time unit (PSPLIB's integer
periods), so U1 needs d >= 1 (its lower end d − √d must not be negative) and B1 needs
d > 2/3 (α > 0); a zero duration (PSPLIB's dummy activities) stays zero under all five.

The papers' durations are continuous. Here a realised duration is rounded as
:func:`~peakopt.oracle.uncertain.scenarios.draw` rounds every realisation (to 1 ms for integer
data, :func:`~peakopt.oracle.uncertain.scenarios.time_places`): the oracle and the solver work on
exact decimals, and a rounding of at most 0.0005 of a period moves no mean that is reported.

Common random numbers: the values are inverse transforms of the very uniforms
:func:`~peakopt.oracle.uncertain.scenarios.uniforms` gives the durations of ``draw`` (row k of
the same stream), so every policy, and every distribution, sees the same quantile of each
activity in scenario k.

The literature's metric is the expected makespan's relative deviation from the critical-path
length at the deterministic durations (:func:`cpl_deviation`), a bound no policy can beat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from peakopt.models import Machine, PeakoptError, Workflow
from peakopt.models.extras import LazyModule
from peakopt.oracle.base.exact import TOLERANCE
from peakopt.oracle.uncertain.dispatch import clamped_needs, constrained

# re-exported: the protocol's names live with the command line's constants (``--distribution``)
from peakopt.oracle.uncertain.names import LITERATURE_DISTRIBUTIONS as LITERATURE_DISTRIBUTIONS
from peakopt.oracle.uncertain.names import LiteratureDistribution as LiteratureDistribution
from peakopt.oracle.uncertain.scenarios import Scenarios, time_places, uniforms

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

    from peakopt.oracle.base.arrays import Floats
else:
    # NumPy on first use: a command's --help imports this module's names, and must not pay for NumPy
    np = LazyModule("numpy", "the oracle")


class ProtocolError(PeakoptError, ValueError):
    """A distribution the protocol does not define, or a duration outside its domain."""


def beta_shape(distribution: LiteratureDistribution, duration: float) -> float:
    """α of B1 or B2 for a duration ``d`` (the second shape parameter is 2α; see the module docstring)."""
    variance = duration / 3 if distribution == "B1" else duration**2 / 3
    return (duration**2 / (2 * variance) - 1) / 3


def check_durations(workflow: Workflow, distribution: str) -> None:
    """Refuse a distribution the protocol does not define, or a duration outside its domain.

    Raises
    ------
    ProtocolError
        Naming the distribution, or the first task whose duration it cannot take.
    """
    if distribution not in LITERATURE_DISTRIBUTIONS:
        raise ProtocolError(
            f"unknown distribution {distribution!r}; choose from {', '.join(LITERATURE_DISTRIBUTIONS)}"
        )
    needs = {"U1": "at least 1", "B1": "above 2/3"}.get(distribution, "")
    for task in workflow.tasks:
        d = task.length
        if not _defined(distribution, d):
            raise ProtocolError(
                f"workflow {workflow.id!r} task {task.id!r}: {distribution} is not defined for "
                f"duration {d:g} (it needs 0 or a duration {needs})"
            )


def _defined(distribution: str, duration: float) -> bool:
    if duration == 0:
        return True
    if distribution == "U1":
        return duration >= 1
    return duration > 2 / 3 if distribution == "B1" else duration > 0


def literature_values(distribution: LiteratureDistribution, nominal: Floats, u: Floats) -> Floats:
    """Durations of ``distribution`` at uniforms ``u`` (``count × tasks``), by inverse transform.

    ``nominal`` holds each task's deterministic duration (its mean); zero stays zero.
    """
    d = np.broadcast_to(nominal, u.shape)
    if distribution == "U1":
        values = d + np.sqrt(d) * (2 * u - 1)
    elif distribution == "U2":
        values = 2 * d * u
    elif distribution == "Exp":
        values = -d * np.log1p(-u)
    else:
        from scipy.special import betaincinv

        positive = nominal > 0
        alpha = np.array([beta_shape(distribution, x) if x > 0 else 1.0 for x in nominal.tolist()])
        x = betaincinv(alpha, 2 * alpha, u)
        values = np.where(positive, d / 2 + 1.5 * d * x, 0.0)
    return np.where(d > 0, values, 0.0)


def draw_literature(
    workflow: Workflow, count: int, distribution: LiteratureDistribution, *, seed: int = 0
) -> Scenarios:
    """``count`` scenarios of ``workflow`` under one of the literature's distributions (demands fixed).

    Parameters
    ----------
    workflow
        The nominal workflow: each task's total run time is the distribution's mean.
    count
        Number of scenarios (>= 0).
    distribution
        One of :data:`LITERATURE_DISTRIBUTIONS`.
    seed
        The user's seed (>= 0); the workflow's content is mixed in, as for ``draw``.

    Raises
    ------
    ProtocolError
        See :func:`check_durations`.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    check_durations(workflow, distribution)
    nominal = np.array([t.length for t in workflow.tasks], dtype=float)
    places = time_places(workflow)
    lengths = literature_values(distribution, nominal, uniforms(workflow, count, seed)[:, 0, :])
    lengths = np.maximum(lengths.round(places), 0.0)
    rows = tuple(tuple(row) for row in lengths.tolist())  # plain floats: the simulator's hot loop
    return Scenarios(workflow, rows, tuple((1.0,) * len(nominal) for _ in rows), seed, None, places)


def critical_paths(workflow: Workflow, lengths: npt.ArrayLike) -> Floats:
    """Per row of ``lengths`` (``scenarios × tasks``), the critical-path length of the dependencies."""
    spans = np.asarray(lengths, dtype=float).reshape(-1, len(workflow.tasks))
    finish = np.zeros_like(spans)
    preds = workflow.predecessors
    for j in workflow.topological_order:
        ready = finish[:, list(preds[j])].max(axis=1) if preds[j] else 0.0
        finish[:, j] = ready + spans[:, j]
    return finish.max(axis=1) if workflow.tasks else np.zeros(len(spans))


def energy_bounds(workflow: Workflow, machine: Machine, lengths: npt.ArrayLike) -> Floats:
    """Per row of ``lengths``, the largest work over capacity of a hard resource: no safe schedule is shorter.

    A task's work rate on a resource is the smallest clamped demand of its segments (its demand,
    for a constant profile), so the bound holds whatever share of the run each segment gets.
    """
    spans = np.asarray(lengths, dtype=float).reshape(-1, len(workflow.tasks))
    resources, capacity = constrained(workflow, machine)
    where = {r: k for k, r in enumerate(resources)}
    rates = np.zeros((len(workflow.tasks), len(resources)))
    for j, task in enumerate(workflow.tasks):
        running = [s for s in task.segments if s.duration > 0] or list(task.segments)
        for k in range(len(resources)):
            rates[j, k] = min(_need(clamped_needs(s.demand, where, capacity), k) for s in running)
    hard = [k for k, r in enumerate(resources) if r not in machine.soft]
    if not hard:
        return np.zeros(len(spans))
    work: Floats = (spans @ rates[:, hard]) / np.array([capacity[k] for k in hard])
    return np.asarray(work.max(axis=1), dtype=float)


def _need(needs: Sequence[tuple[int, float, float]], resource: int) -> float:
    return next((amount for k, amount, _ in needs if k == resource), 0.0)


def cpl_deviation(makespans: Sequence[float] | Floats, cpl: float) -> float | None:
    """The literature's metric: (mean makespan − critical-path length) / critical-path length.

    ``cpl`` is the critical-path length at the deterministic durations; None when it is 0.
    """
    values = np.asarray(makespans, dtype=float)
    if cpl <= 0 or not values.size:
        return None
    return float((values.mean() - cpl) / cpl)


def relative_gaps(makespans: npt.ArrayLike, bounds: npt.ArrayLike) -> Floats:
    """(makespan − bound) / bound per run; 0 where the bound is 0 (nothing to run, nothing to lose).

    A makespan that meets its bound up to the oracle's relative tolerance has the gap's exact
    floor, 0 (never -7e-18 from float sums).
    """
    span, best = np.asarray(makespans, dtype=float), np.asarray(bounds, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gaps = np.where(best > 0, (span - best) / np.where(best > 0, best, 1.0), 0.0)
    met = np.abs(span - best) <= 2 * TOLERANCE * np.fmax(np.abs(span), np.abs(best))
    return np.asarray(np.where(met, 0.0, gaps), dtype=float)
