"""Monte Carlo scoring: one plan (or online policy) executed over a workflow's sampled scenarios.

For a workflow × machine, the scenarios of :func:`peakopt.oracle.uncertain.scenarios.draw` are run through
an execution policy (a compiled :class:`peakopt.oracle.uncertain.simulate.Simulation`, or anything with its
``run(lengths, scales) -> starts``), and every realised schedule is scored on its realised
workflow by the vectorised realised scorer (:mod:`peakopt.oracle.vector.realised`, checked against the
exact oracle). The result, :class:`~peakopt.oracle.tables.rows.MonteCarlo`, holds the probability of an
avoidable overflow, the dependency-violation and safe rates, the expected and 95th-percentile
makespan, the expected avoidable cva and, given each scenario's own optimum (the
perfect-information bound, :mod:`peakopt.campaign.hindsight`), the expected gap and efficiency.

Because scenarios are common random numbers, two plans or policies scored on the same workflow
with the same seed face the very same realisations: their difference is the plans', not the
draws'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from peakopt.models import Machine, PeakoptError, Workflow
from peakopt.models.extras import LazyModule
from peakopt.oracle.base.exact import TOLERANCE
from peakopt.oracle.base.instants import same_instant
from peakopt.oracle.tables.rows import MonteCarlo
from peakopt.oracle.uncertain.scenarios import Noise, Scenarios
from peakopt.oracle.vector.realised import RealisedScorer, RealisedScores

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from peakopt.oracle.base.arrays import Floats
else:
    # NumPy on first use: a command's --help imports this module's names, and must not pay for NumPy
    np = LazyModule("numpy", "the oracle")


class NonFiniteError(PeakoptError):
    """A realised figure that is not a finite number: no figure is computed from it."""


class Runner(Protocol):
    """What executes a plan on one scenario: the simulator's compiled form."""

    def run(self, lengths: Sequence[float], scales: Sequence[float] | None = None) -> list[float]:
        """Realised start per task position for one scenario's run times and demand multipliers."""
        ...


@dataclass(frozen=True)
class Runs:
    """The realised starts of every scenario and their scores (``scenarios × tasks`` starts)."""

    starts: Floats
    scores: RealisedScores


def realise(runner: Runner, scenarios: Scenarios) -> Floats:
    """The realised starts of every scenario (rows) by task position (columns)."""
    rows = [
        runner.run(lengths, scales)
        for lengths, scales in zip(scenarios.lengths, scenarios.scales, strict=True)
    ]
    return np.array(rows, dtype=float).reshape(len(scenarios), len(scenarios.nominal.tasks))


def run_scenarios(
    workflow: Workflow,
    machine: Machine,
    runner: Runner,
    scenarios: Scenarios,
    scorer: RealisedScorer | None = None,
) -> Runs:
    """Execute ``runner`` on every scenario and score each realised schedule.

    Parameters
    ----------
    workflow, machine
        The nominal instance (``scenarios`` realise ``workflow``).
    runner
        The execution policy, compiled (``Simulation(workflow, machine, policy, plan)``).
    scenarios
        From :func:`~peakopt.oracle.uncertain.scenarios.draw`.
    scorer
        A scorer built for the pair already (reused across plans of one workflow × machine).
    """
    starts = realise(runner, scenarios)
    scorer = scorer or RealisedScorer(workflow, machine)
    return Runs(starts, scorer.score(starts, scenarios.lengths, scenarios.scales))


def summarise_runs(
    scores: RealisedScores,
    scenarios: Scenarios,
    execution: str,
    optima: Sequence[float | None] | None = None,
) -> MonteCarlo:
    """The :class:`~peakopt.oracle.tables.rows.MonteCarlo` figures of scored runs.

    Parameters
    ----------
    scores
        One entry per scenario.
    scenarios
        The scenarios they were run on (count, seed, noise).
    execution
        The policy's name, for the record.
    optima
        Per scenario, the optimum of the realised workflow (None where unknown).
    """
    count = len(scores.makespan)
    _finite(scores, optima)
    fields: dict[str, Any] = {}
    if count:
        fields = {
            "safe_rate": float(scores.safe.mean()),
            "overflow_rate": float(scores.overflow.mean()),
            "violation_rate": float((scores.dependency_violations > 0).mean()),
            "mean_makespan": float(scores.makespan.mean()),
            "p95_makespan": float(np.percentile(scores.makespan, 95)),
            "mean_avoidable_cva": float(scores.avoidable_cva.mean()),
        }
    fields.update(_against_optima(scores, optima))
    return MonteCarlo(execution=execution, **drawn(count, scenarios.seed, scenarios.noise), **fields)


def _against_optima(scores: RealisedScores, optima: Sequence[float | None] | None) -> dict[str, Any]:
    if optima is None:
        return {}
    if len(optima) != len(scores.makespan):
        raise ValueError(f"optima: one per scenario ({len(scores.makespan)}), got {len(optima)}")
    known = np.array([o is not None for o in optima], dtype=bool)
    best = np.array([o if o is not None else np.nan for o in optima], dtype=float)
    if not known.any():
        return {"bounded": 0}
    with np.errstate(divide="ignore", invalid="ignore"):
        # a zero optimum (nothing to run) is met only by a zero makespan: efficiency 1 there
        # a run with soft overflow: its slowed makespan, never below the optimum (as charged_makespan)
        span = np.where(scores.soft_overflow, np.fmax(scores.slowed_makespan, best), scores.makespan)
        ratio = np.where(best > 0, best / span, np.where(span > 0, 0.0, 1.0))
        gap = np.where(best > 0, (span - best) / best, 0.0)
    # at the optimum, up to float rounding, the gap is its exact floor: 0 (never -6e-18)
    met = _same_instants(span, best, known)
    ratio, gap = np.where(met, 1.0, ratio), np.where(met, 0.0, gap)
    safe = scores.safe & known
    return {
        "bounded": int(known.sum()),
        "efficiency": float(np.where(scores.safe, ratio, 0.0)[known].mean()),
        "gap": float(gap[safe].mean()) if safe.any() else None,
    }


def _finite(scores: RealisedScores, optima: Sequence[float | None] | None) -> None:
    """Refuse to compute a figure from a realised makespan, cva or optimum that is not a finite number.

    Raises
    ------
    NonFiniteError
        Naming the first scenario and the value.
    """
    named = {"makespan": scores.makespan, "avoidable cva": scores.avoidable_cva}
    named["slowed makespan"] = np.where(scores.soft_overflow, scores.slowed_makespan, 0.0)
    if optima is not None:
        named["optimum"] = np.array([0.0 if o is None else o for o in optima], dtype=float)
    for name, values in named.items():
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            k = int(bad[0])
            raise NonFiniteError(f"the {name} of scenario {k} is {values[k]!r}, not a finite number")


def _same_instants(span: Floats, best: Floats, known: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Per scenario, whether the makespan is the optimum itself for the judge (:func:`same_instant`)."""
    with np.errstate(invalid="ignore"):
        near = known & (np.abs(span - best) <= 2 * TOLERANCE * np.fmax(np.abs(span), np.abs(best)))
    met = np.zeros(len(span), dtype=bool)
    for k in np.flatnonzero(near):  # a few: the float test settles the rest
        met[k] = same_instant(float(span[k]), float(best[k]))
    return met


def monte_carlo(
    workflow: Workflow,
    machine: Machine,
    runner: Runner,
    scenarios: Scenarios,
    *,
    execution: str,
    optima: Sequence[float | None] | None = None,
    scorer: RealisedScorer | None = None,
) -> MonteCarlo:
    """Monte Carlo figures of one plan or policy on one workflow × machine.

    Parameters
    ----------
    workflow, machine
        The nominal instance.
    runner
        The compiled execution policy (see :class:`Runner`).
    scenarios
        The sampled scenarios of ``workflow``.
    execution
        The policy's name, recorded in the result.
    optima
        The perfect-information bound: per scenario, its realised workflow's optimum.
    scorer
        A :class:`~peakopt.oracle.vector.realised.RealisedScorer` of the pair, to reuse.

    Returns
    -------
    MonteCarlo
    """
    runs = run_scenarios(workflow, machine, runner, scenarios, scorer)
    return summarise_runs(runs.scores, scenarios, execution, optima)


def unscored(execution: str, samples: int, seed: int, noise: Noise | None, message: str) -> MonteCarlo:
    """The figures of a record that gave no plan to execute: counted unsafe, nothing measured."""
    return MonteCarlo(
        execution=execution, **drawn(samples, seed, noise), scored=False, safe_rate=0.0, message=message
    )


def drawn(samples: int, seed: int, noise: Noise | None) -> dict[str, Any]:
    """How the scenarios were drawn, as :class:`~peakopt.oracle.tables.rows.MonteCarlo` records it."""
    return {
        "samples": samples,
        "seed": seed,
        "noise_duration": None if noise is None else noise.duration,
        "noise_demand": None if noise is None else noise.demand,
    }
