"""One tool call drawn from its archetype: duration, CPU and memory, with input noise.

A call's figures are lognormal draws from the archetype's percentiles. Input
noise couples them the way inputs do: one *input size* score moves the
duration and the memory of a call together (correlation :data:`INPUT_WEIGHT`
squared), and the peak CPU follows the average CPU. Scores are clipped to
±2.5 so that no call is absurd. Figures are rounded so that an exact solver
can scale them to integers: durations to 0.01 s (at least 0.01), CPU to 0.01
cores (at least 0.01), memory to whole MB (at least 1).

A call also says how its duration varies from run to run (:func:`duration_varies`): a
lognormal around its drawn duration whose spread is the part of the archetype's that the shared
input size does not explain (the call's own score, weight ``sqrt(1 - INPUT_WEIGHT**2)``): a
given call's inputs are fixed, its own variation is not. Demands stay fixed.

With a piecewise profile (for archetypes with a ``startup`` entry), the call
is a start-up spike at peak CPU and peak memory for a share of its duration,
then a steady phase that keeps a share of the memory and runs at the CPU
level that keeps the call's time-averaged CPU.
"""

from __future__ import annotations

import math
from typing import Any

from peakopt.instances.catalog import Archetype
from peakopt.instances.draws import Draws
from peakopt.models.uncertainty import Z90

CPU, MEMORY = "cpu", "memory_mb"

#: Weight of the shared input-size score in the duration's and memory's scores.
INPUT_WEIGHT = 0.6
#: Weight of the average-CPU score in the peak-CPU score.
CPU_WEIGHT = 0.7


def _mix(weight: float, shared: float, own: float) -> float:
    return weight * shared + math.sqrt(1 - weight * weight) * own


def seconds(value: float) -> float:
    """A duration rounded to 0.01 s, at least 0.01."""
    return max(0.01, round(value, 2))


def cores(value: float) -> float:
    """CPU rounded to 0.01 cores, at least 0.01."""
    return max(0.01, round(value, 2))


def megabytes(value: float) -> float:
    """Memory rounded to whole MB, at least 1."""
    return float(max(1, round(value)))


def draw_call(
    archetype: Archetype, draws: Draws, *, noise: float = 1.0, piecewise: bool = False, varies: bool = False
) -> dict[str, Any]:
    """The profile fields of one call: ``duration``/``demand`` or ``profile``, ``meta``, ``varies``.

    Parameters
    ----------
    archetype
        What is called.
    draws
        The random source.
    noise
        Scale of the input noise: 0 gives every call the archetype's median
        figures, 1 the catalog's spread.
    piecewise
        Draw a start-up spike then a steady phase, if the archetype has one.
    varies
        Add the ``varies`` field (:func:`duration_varies`); it draws nothing.
    """
    size = draws.normal()
    duration = seconds(archetype.duration.at(noise * _mix(INPUT_WEIGHT, size, draws.normal())))
    memory = megabytes(archetype.memory.at(noise * _mix(INPUT_WEIGHT, size, draws.normal())))
    z_avg = draws.normal()
    avg = cores(archetype.cpu_avg.at(noise * z_avg))
    peak = max(avg, cores(archetype.cpu_peak.at(noise * _mix(CPU_WEIGHT, z_avg, draws.normal()))))
    meta: dict[str, Any] = {"resource_class": archetype.resource_class}
    spread = {"varies": duration_varies(archetype, duration)} if varies else {}
    if piecewise and archetype.startup is not None and duration >= 0.02:
        share = draws.uniform(*archetype.startup.share)
        keep = draws.uniform(*archetype.startup.steady_memory)
        return _spiked(duration, avg, peak, memory, share, keep, meta) | spread
    meta["cpu_avg_cores"] = avg  # the peak is the cpu demand
    return {"duration": duration, "demand": {CPU: peak, MEMORY: memory}, "meta": meta} | spread


def duration_varies(archetype: Archetype, duration: float) -> dict[str, Any]:
    """The ``varies`` field of a call of ``archetype`` drawn at ``duration`` (see the module docstring).

    A lognormal with p50 the call's duration and p10/p90 at ``∓ z90`` times the call's own
    log-spread, rounded as durations are.
    """
    sigma = math.sqrt(1 - INPUT_WEIGHT * INPUT_WEIGHT) * archetype.duration.sigma
    width = math.exp(Z90 * sigma)
    percentiles = {"p10": seconds(duration / width), "p50": duration, "p90": seconds(duration * width)}
    return {"duration": {"kind": "lognormal", **percentiles}}


def _spiked(
    duration: float, avg: float, peak: float, memory: float, share: float, keep: float, meta: dict[str, Any]
) -> dict[str, Any]:
    # to_context derives the time-averaged and peak CPU from the segments
    spike = min(seconds(share * duration), round(duration - 0.01, 2))
    steady = round(duration - spike, 2)
    steady_cpu = min(peak, cores((avg * duration - peak * spike) / steady))
    return {
        "profile": [
            {"duration": spike, "demand": {CPU: peak, MEMORY: memory}},
            {"duration": steady, "demand": {CPU: steady_cpu, MEMORY: megabytes(keep * memory)}},
        ],
        "meta": meta,
    }
