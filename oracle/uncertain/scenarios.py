"""Seeded scenarios: realisations of a workflow's uncertain durations and demands.

A scenario gives, per task (in workflow order), its realised total run time in seconds and one
demand multiplier (1.0 when demands are fixed). A piecewise profile's segments are scaled in
proportion to the realised run time; the multiplier scales every demand of the task.

Where the values come from:

- by default, each task's own ``varies`` (:mod:`peakopt.models.uncertainty`); a task without
  one keeps its nominal figures;
- with a global :class:`Noise`, PeakBench's protocol *instead*: every task's duration uniform
  within ±``duration`` of its nominal value and its demand multiplier uniform within
  ±``demand`` of 1, whatever its own ``varies`` says (so ``Noise()`` is the nominal workflow:
  noise level 0 of a noise table, even for a suite whose tasks vary).

Common random numbers: sample ``k`` of a workflow is drawn from a stream seeded by the
workflow's nominal content (:func:`~peakopt.models.nominal_hash`) and the user's seed, two
uniforms per task, sample after sample. So the same (content, seed, k) always gives the same
scenario, whatever the machine, method or policy judged on it; the first ``k`` samples do not
depend on how many are drawn; and two noise levels (or distributions) transform the *same*
uniforms, so a higher noise moves every duration further in the same direction.

Rounding: realised run times are rounded to 1 ms, or to the input's own decimals when finer
(at most 1 µs): fine enough not to matter, coarse enough for the oracle's exact integer
arithmetic and for CP-SAT's time scaling. Multipliers are rounded to 0.001, and a realised
demand to its nominal decimals plus 3 (the product's own). A task whose distribution is fixed
(none, or a spread of 0) keeps its nominal figures exactly.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from peakopt.models import PeakoptError, Segment, Task, Varies, Workflow, nominal_hash
from peakopt.models.extras import LazyModule
from peakopt.models.uncertainty import (
    U_HIGH,
    Distribution,
    Empirical,
    Lognormal,
    Triangular,
    Uniform,
    check_draws,
    is_fixed,
)
from peakopt.oracle.base.exact import digits

if TYPE_CHECKING:
    import numpy as np

    from peakopt.oracle.base.arrays import Floats
else:
    # NumPy on first use: a command's --help imports this module's names, and must not pay for NumPy
    np = LazyModule("numpy", "the oracle")

#: Decimal places of realised run times: at least 3 (1 ms), at most 6 (1 µs).
TIME_PLACES = (3, 6)
#: Decimal places of a demand multiplier (0.1 %).
SCALE_PLACES = 3


class NoiseError(PeakoptError):
    """A global noise under which a task's draws would exceed the largest value a draw may take."""


@dataclass(frozen=True)
class Noise:
    """PeakBench's perturbation protocol, applied to every task instead of its own ``varies``.

    Attributes
    ----------
    duration
        Relative half-width of the uniform perturbation of durations, in [0, 1): 0.25 is ±25 %.
    demand
        The same for every demand (one multiplier per task), in [0, 1).
    """

    duration: float = 0.0
    demand: float = 0.0

    def __post_init__(self) -> None:
        for name in ("duration", "demand"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value < 1):
                raise ValueError(f"noise {name} must be in [0, 1), got {value!r}")


@dataclass(frozen=True)
class Scenarios:
    """The sampled scenarios of one workflow.

    Attributes
    ----------
    nominal
        The workflow the scenarios realise.
    lengths
        ``count × tasks``: per scenario, each task's realised run time in seconds (tasks in
        workflow order).
    scales
        ``count × tasks``: per scenario, each task's demand multiplier.
    seed
        The user's seed the scenarios were drawn with.
    noise
        The global noise that replaced the tasks' own distributions, if any.
    places
        Decimal places the run times were rounded to.
    """

    nominal: Workflow
    lengths: tuple[tuple[float, ...], ...]
    scales: tuple[tuple[float, ...], ...]
    seed: int = 0
    noise: Noise | None = None
    places: int = TIME_PLACES[0]

    def __len__(self) -> int:
        return len(self.lengths)

    def workflow(self, k: int) -> Workflow:
        """Scenario ``k`` as a workflow of plain durations and demands (no ``varies``)."""
        tasks = tuple(
            _realised(task, length, scale, self.places)
            for task, length, scale in zip(self.nominal.tasks, self.lengths[k], self.scales[k], strict=True)
        )
        return self.nominal.model_copy(update={"tasks": tasks})


def _realised(task: Task, length: float, scale: float, places: int) -> Task:
    segments = task.segments
    if length == task.length:
        durations = [s.duration for s in segments]
    else:
        # cumulative boundaries, each rounded: the segments stay >= 0 and add up to the length; in
        # proportion to the nominal segments, or evenly when there is nothing to be in proportion to
        weights = [s.duration for s in segments] if task.length > 0 else [1.0] * len(segments)
        ratio, total, bounds = length / (task.length if task.length > 0 else len(segments)), 0.0, [0.0]
        for weight in weights:
            total += weight
            bounds.append(round(total * ratio, places))
        bounds[-1] = length
        durations = [max(0.0, round(b - a, places)) for a, b in itertools.pairwise(bounds)]
    demands = [{r: _scaled(a, scale) for r, a in s.demand.items()} for s in segments]
    fields: dict[str, Any] = {"varies": None, "duration": None, "demand": None, "profile": None}
    if task.profile is None:
        fields.update(duration=durations[0], demand=demands[0] if task.demand is not None else None)
    else:
        fields["profile"] = tuple(
            Segment(duration=d, demand=m) for d, m in zip(durations, demands, strict=True)
        )
    return task.model_copy(update=fields)


def _scaled(amount: float, scale: float) -> float:
    if scale == 1.0:
        return amount
    return round(amount * scale, max(0, -digits(amount)[1]) + SCALE_PLACES)


def time_places(workflow: Workflow) -> int:
    """Decimal places of realised run times (see the module docstring)."""
    finest = max((-digits(s.duration)[1] for t in workflow.tasks for s in t.segments), default=0)
    low, high = TIME_PLACES
    return min(high, max(low, finest))


def stream_seed(workflow: Workflow, seed: int) -> list[int]:
    """The entropy of the workflow's random stream: its nominal content hash and the user's seed."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return [int(nominal_hash(workflow), 16), seed]


def uniforms(workflow: Workflow, count: int, seed: int = 0) -> Floats:
    """``count × 2 × tasks`` uniforms in [2**-54, 1 - 2**-53], sample after sample: row k is scenario k's.

    ``[:, 0]`` drive the durations, ``[:, 1]`` the demands.
    """
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(stream_seed(workflow, seed))))
    # numpy fills C order from the stream, so the first k rows never depend on count; the
    # half-step lifts 0 off 0, and the clamp keeps the top value (1 - 2**-53, which the half-step
    # rounds up to 1.0) below 1: every value in [2**-54, U_HIGH], where every inverse CDF is finite
    return np.minimum(rng.random((count, 2, len(workflow.tasks))) + 2.0**-54, U_HIGH)


def values(distribution: Distribution, nominal: float, u: Floats) -> Floats:
    """The values of ``distribution`` at uniforms ``u`` (inverse transform), for a nominal value."""
    if isinstance(distribution, Uniform):
        return nominal * (1 + distribution.spread * (2 * u - 1))
    if isinstance(distribution, Triangular):
        low, mode, high = distribution.fit
        width = high - low
        if width == 0:
            return np.full_like(u, low)
        split = (mode - low) / width
        rising = low + np.sqrt(u * width * (mode - low))
        falling = high - np.sqrt((1 - u) * width * (high - mode))
        return np.where(u < split, rising, falling)
    if isinstance(distribution, Lognormal):
        from scipy.special import ndtri

        return np.exp(distribution.mu + distribution.sigma * ndtri(u))
    assert isinstance(distribution, Empirical)
    samples = np.asarray(distribution.samples, dtype=float)
    return samples[np.minimum((u * len(samples)).astype(np.intp), len(samples) - 1)]


def draw(workflow: Workflow, count: int, *, seed: int = 0, noise: Noise | None = None) -> Scenarios:
    """``count`` seeded scenarios of ``workflow`` (see the module docstring).

    Parameters
    ----------
    workflow
        The nominal workflow; its tasks' ``varies`` say how they vary unless ``noise`` is given.
    count
        Number of scenarios (>= 0).
    seed
        The user's seed (>= 0); the workflow's content is mixed in.
    noise
        PeakBench's uniform perturbation, replacing the tasks' own distributions.

    Returns
    -------
    Scenarios
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if noise is not None:
        _noise_drawable(workflow, noise)
    u = uniforms(workflow, count, seed)
    places = time_places(workflow)
    lengths = np.empty((count, len(workflow.tasks)))
    scales = np.ones((count, len(workflow.tasks)))
    for i, task in enumerate(workflow.tasks):
        duration, demand = _distributions(task, noise)
        nominal = task.length
        lengths[:, i] = nominal
        if duration is not None and not is_fixed(duration):
            lengths[:, i] = values(duration, nominal, u[:, 0, i]).round(places)
        if demand is not None and not is_fixed(demand):
            scales[:, i] = values(demand, 1.0, u[:, 1, i]).round(SCALE_PLACES)
    return Scenarios(workflow, _rows(np.maximum(lengths, 0.0)), _rows(scales), seed, noise, places)


def _noise_drawable(workflow: Workflow, noise: Noise) -> None:
    """The model's rule for the tasks' own distributions, for the global noise that replaces them.

    Raises
    ------
    NoiseError
        Naming the first task whose largest draw under ``noise`` exceeds the largest value a
        draw may take (:data:`~peakopt.models.uncertainty.MAX_DRAW`).
    """
    for task in workflow.tasks:
        duration, demand = _distributions(task, noise)
        peak = max((a for s in task.segments for a in s.demand.values()), default=0.0)
        try:
            check_draws(Varies(duration=duration, demand=demand), task.length, peak)
        except ValueError as exc:
            raise NoiseError(f"workflow {workflow.id!r} task {task.id!r} under --noise: {exc}") from None


def _rows(matrix: Floats) -> tuple[tuple[float, ...], ...]:
    """Rows of plain floats: what the simulator's hot loop reads, no numpy scalar inside."""
    return tuple(tuple(row) for row in matrix.tolist())


def _distributions(task: Task, noise: Noise | None) -> tuple[Distribution | None, Distribution | None]:
    if noise is not None:
        return Uniform(kind="uniform", spread=noise.duration), Uniform(kind="uniform", spread=noise.demand)
    varies = task.varies
    return (None, None) if varies is None else (varies.duration, varies.demand)
