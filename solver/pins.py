"""Fixed starts and release times for re-planning: checked, then set on the integer problem.

A runtime that re-plans mid-run passes the steps already started as ``fixed`` (each starts
exactly there; the workflow gives their actual durations, or at least their elapsed time so far)
and the steps not yet started as ``release`` (none starts earlier). :func:`check_pins` refuses
what no schedule can keep, in the real numbers; :func:`pin` puts the pins on the scaled problem
(:attr:`~peakopt.solver.scaling.IntegerProblem.release` and ``fixed``), whose time grid
:func:`~peakopt.solver.scaling.scale` made hold them (``times``): a fixed start must fall on a
tick exactly, a release time is rounded up to one (later, so still kept).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

from peakopt.models import PeakoptError, Schedule, Workflow
from peakopt.models.workflow import topological_order
from peakopt.oracle.base.exact import fraction
from peakopt.solver.bounds import chains_from, real_lengths
from peakopt.solver.feasibility import overflow
from peakopt.solver.scaling import IntegerProblem


class PinError(PeakoptError, ValueError):
    """Fixed starts or release times that no schedule can keep (or that name no step)."""


@dataclass(frozen=True)
class Pins:
    """What a re-plan keeps: step id -> fixed start, step id -> release time (seconds)."""

    fixed: dict[str, float] = field(default_factory=dict)
    release: dict[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.fixed or self.release)

    @property
    def times(self) -> list[float]:
        """Every pinned instant (for the exact time grid)."""
        return [*self.fixed.values(), *self.release.values()]

    def params(self) -> dict[str, object]:
        """What a result's params record: the pins given (none: nothing)."""
        found: dict[str, object] = {}
        if self.fixed:
            found["fixed"] = dict(self.fixed)
        if self.release:
            found["release"] = dict(self.release)
        return found


def check_pins(
    workflow: Workflow, fixed: Mapping[str, float] | None, release: Mapping[str, float] | None
) -> Pins:
    """The pins, if some schedule can keep them as far as the real numbers tell.

    Raises
    ------
    PinError
        On an unknown step, a negative or non-finite time, a step both fixed and released, a
        fixed step whose predecessor is not fixed (a started step's predecessors have all
        started) or that starts before a fixed predecessor ends.
    """
    pins = Pins(dict(fixed or {}), dict(release or {}))
    where = f"workflow {workflow.id!r}"
    for kind, values in (("fixed", pins.fixed), ("release", pins.release)):
        for step, at in values.items():
            if step not in workflow.index:
                raise PinError(f"{where}: {kind} names step {step!r}, which it does not have")
            if not (isinstance(at, int | float) and math.isfinite(at) and at >= 0):
                raise PinError(f"{where}: {kind} time of step {step!r} must be a number >= 0, got {at!r}")
    both = sorted(pins.fixed.keys() & pins.release.keys())
    if both:
        raise PinError(f"{where}: step {both[0]!r} is both fixed and released (a fixed start is kept as is)")
    lengths = real_lengths(workflow)
    for task in workflow.tasks:
        if task.id not in pins.fixed:
            continue
        for pred in task.depends_on:
            if pred not in pins.fixed:
                raise PinError(
                    f"{where}: fixed step {task.id!r} depends on {pred!r}, which is not fixed "
                    "(a step that started had its predecessors started, and ended, before it)"
                )
            ends = fraction(pins.fixed[pred]) + lengths[workflow.index[pred]]
            if fraction(pins.fixed[task.id]) < ends:
                raise PinError(
                    f"{where}: fixed step {task.id!r} starts at {pins.fixed[task.id]:g} s, before its "
                    f"fixed predecessor {pred!r} ends at {float(ends):g} s"
                )
    return pins


def pin(problem: IntegerProblem, pins: Pins, workflow_id: str = "") -> IntegerProblem:
    """``problem`` with the pins in ticks: fixed starts exactly, release times rounded up.

    Raises
    ------
    PinError
        When a fixed start is not on the problem's tick (a grid that had to be rounded), or
        when the fixed steps together exceed a capacity.
    """
    if not pins:
        return problem
    index = {task_id: i for i, task_id in enumerate(problem.ids)}
    fixed: list[int | None] = [None] * problem.size
    release = [0] * problem.size
    for step, at in pins.fixed.items():
        ticks = fraction(at) / problem.tick
        if ticks.denominator != 1:
            raise PinError(
                f"workflow {workflow_id!r}: fixed start of step {step!r} ({at:g} s) is not on the "
                f"solver's time grid (ticks of {float(problem.tick):g} s: "
                f"{problem.note or 'the grid is rounded'}); round the fixed starts to it"
            )
        fixed[index[step]] = release[index[step]] = int(ticks)
    for step, at in pins.release.items():
        release[index[step]] = math.ceil(fraction(at) / problem.tick)
    pinned = replace(problem, release=tuple(release), fixed=tuple(fixed))
    _check_capacity(pinned, [i for i, at in enumerate(fixed) if at is not None], workflow_id)
    return pinned


def _check_capacity(problem: IntegerProblem, chosen: list[int], workflow_id: str) -> None:
    starts = [at or 0 for at in problem.fixed]
    found = overflow(problem, starts, chosen)
    if found is None:
        return
    m, tick = found
    running = [
        problem.ids[i]
        for i in chosen
        if any(
            p.demand[m] and starts[i] + p.offset <= tick < starts[i] + p.offset + p.size
            for p in problem.pieces[i]
        )
    ]
    exactly = "" if problem.exact else " (as rounded up for the solver: " + problem.note + ")"
    capacity = float(problem.capacity[m] * problem.units[m])
    raise PinError(
        f"workflow {workflow_id!r}: fixed steps {', '.join(map(repr, running))} together exceed "
        f"the capacity {capacity:g} of {problem.resources[m]!r} at {float(tick * problem.tick):g} s{exactly}"
    )


def by_start(problem: IntegerProblem, schedule: Schedule) -> list[int]:
    """Task indices in the order ``schedule`` starts them, made topological (ties: the problem's order)."""
    rank = {task: r for r, task in enumerate(problem.order)}
    keys = [(schedule.starts.get(task_id, 0.0), rank[i]) for i, task_id in enumerate(problem.ids)]
    return list(topological_order(problem.preds, keys))


def release_bound(problem: IntegerProblem, lengths: list[Fraction], pins: Pins) -> Fraction:
    """The critical path from the release times and fixed starts, in seconds, exactly (a lower bound)."""
    head = [Fraction(0)] * problem.size
    index = {task_id: i for i, task_id in enumerate(problem.ids)}
    for step, at in [*pins.fixed.items(), *pins.release.items()]:
        head[index[step]] = fraction(at)
    head = chains_from(problem, lengths, head)
    return max((h + d for h, d in zip(head, lengths, strict=True)), default=Fraction(0))
