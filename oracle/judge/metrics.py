"""The metrics of the design's table, one public function each, in exact arithmetic.

A schedule is measured once (:func:`measure`): its times and every resource's
demands go on exact integer grids and one event sweep per resource gives the
integrals the metrics are made of (:mod:`peakopt.oracle.judge.sweep`). Each metric
is then a function of that :class:`Measured` schedule, named as in the table:

- :func:`makespan`: max_i (t_i + d_i);
- :func:`cva`: ∫ Σ_m max(0, u_m(τ) − 1) dτ (PeakBench Eq. 8);
- :func:`cva_floor`: Σ_i Σ_m ∫ max(0, r_im(s)/C_m − 1) ds, what no schedule avoids;
- :func:`avoidable_cva`: cva − cva_floor;
- :func:`dependency_violations`: the edges a -> b with t_b < t_a + d_a;
- :func:`safe`: avoidable_cva on the machine's hard resources == 0 and every start valid
  (:func:`valid`); :func:`avoidable_cva_hard` and :func:`avoidable_cva_soft` split avoidable_cva;
- :func:`mru`: (1/span) ∫ mean_m min(1, u_m(τ)) dτ;
- :func:`strict_mru`: mru if cva == 0 else 0 (PeakBench's); :func:`safe_mru`: mru if safe else 0;
- :func:`gap`: (makespan − OPT) / OPT; :func:`gap_vs_lb` and :func:`gap_vs_ub` against the bounds;
- :func:`efficiency`: OPT / makespan for a valid, safe schedule, 0 otherwise — the headline number;
  a schedule that oversubscribes a soft resource is judged by its slowed makespan
  (:mod:`peakopt.oracle.judge.slowdown`, :func:`charged_makespan`).

``cva_floor`` depends on the instance only: ``cva_floor(measure(workflow,
machine))`` measures no schedule. The gaps compare a makespan with a reference
result. :func:`peakopt.oracle.judge.evaluate.evaluate` gathers them all in a
:class:`~peakopt.oracle.judge.verdict.Score`; :mod:`peakopt.oracle.vector.batch` computes the
same figures for many schedules at once in floats.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle.base.exact import close, over, to_float
from peakopt.oracle.judge.sweep import Demands, Grid, Swept, demand_grid, place_segments, sweep, time_grid

#: What can be wrong with a start (see :attr:`Measured.unfit`).
Unfit = Literal["missing", "negative_start", "unknown"]
#: A resource whose overflow fails steps (``hard``) or slows them down (``soft``).
Hardness = Literal["hard", "soft"]


def _floors(grid: Grid, demands: Demands) -> list[int]:
    """Per task, Σ (amount − C) × duration over its segments over capacity on their own (grid units)."""
    cap = demands.capacity
    return [
        sum(
            (amount - cap) * (end - begin)
            for (begin, end), amount in zip(itertools.pairwise(bounds), amounts, strict=True)
            if over(amount, cap)
        )
        for bounds, amounts in zip(grid.bounds, demands.demand, strict=True)
    ]


def task_floor(workflow: Workflow, resource: str, capacity: float) -> dict[str, float]:
    """Per task over ``capacity`` on its own, the overload it causes alone: ∫ max(0, r(s)/C − 1) ds."""
    grid = time_grid(workflow, {})
    demands = demand_grid(workflow, resource, capacity)
    return {
        task.id: to_float(area, grid.exponent, demands.capacity)
        for task, area in zip(workflow.tasks, _floors(grid, demands), strict=True)
        if area
    }


@dataclass(frozen=True)
class Usage:
    """One resource under a measured schedule, on its grids (amount units × time units).

    ``swept`` holds the sweep's integrals and overflow intervals, ``floor`` what
    the steps over ``capacity`` on their own cause wherever they run.
    """

    capacity: float
    demands: Demands
    swept: Swept
    floor: int


@dataclass(frozen=True)
class Measured:
    """A schedule measured once, exactly: what every metric is computed from.

    Attributes
    ----------
    grid
        The durations and the known tasks' starts on one integer time grid.
    usage
        Per resource of the machine, its load's integrals.
    unfit
        ``(kind, task)`` per start the schedule cannot have, in task order:
        ``missing`` (no start), ``negative_start``, then ``unknown`` (no such task).
    broken
        The dependencies ``(predecessor, successor)`` the starts break, in edge order.
    end, origin
        The latest finish and ``min(0, earliest start)``, on the time grid.
    soft
        The machine's soft resources (none with ``soft_as_hard``): their overflow is no unsafety.
    """

    grid: Grid
    usage: dict[str, Usage]
    unfit: tuple[tuple[Unfit, str], ...]
    broken: tuple[tuple[str, str], ...]
    end: int
    origin: int
    soft: frozenset[str] = frozenset()

    def seconds(self, value: Fraction | int) -> float:
        """A time (or area per capacity) on the time grid, in seconds."""
        value = Fraction(value)
        return to_float(value.numerator, self.grid.exponent, value.denominator)


def _unfit(workflow: Workflow, starts: Mapping[str, float]) -> tuple[tuple[Unfit, str], ...]:
    found: list[tuple[Unfit, str]] = [
        ("missing" if task.id not in starts else "negative_start", task.id)
        for task in workflow.tasks
        if task.id not in starts or starts[task.id] < 0
    ]
    found.extend(("unknown", tid) for tid in starts if tid not in workflow.index)
    return tuple(found)


def _broken(workflow: Workflow, grid: Grid) -> tuple[tuple[str, str], ...]:
    index, starts = workflow.index, grid.starts
    return tuple(
        (pred, succ)
        for pred, succ in workflow.edges
        if pred in starts
        and succ in starts
        and starts[succ] < (end := starts[pred] + grid.bounds[index[pred]][-1])
        and not close(starts[succ], end, grid.scale)
    )


def measure(
    workflow: Workflow,
    machine: Machine,
    starts: Mapping[str, float] | None = None,
    *,
    soft_as_hard: bool = False,
) -> Measured:
    """Sweep the schedule ``starts`` of ``workflow`` on ``machine`` once, exactly (no starts: none placed).

    Resources the machine does not list are unconstrained and enter no metric; with
    ``soft_as_hard`` its soft resources count as hard.
    """
    starts = starts or {}
    grid = time_grid(workflow, starts)
    usage = {}
    for resource, capacity in machine.capacity.items():
        demands = demand_grid(workflow, resource, capacity)
        swept = sweep(place_segments(workflow, grid, demands), demands.capacity, grid.scale)
        usage[resource] = Usage(capacity, demands, swept, sum(_floors(grid, demands)))
    index = workflow.index
    end = max((s + grid.bounds[index[t]][-1] for t, s in grid.starts.items()), default=0)
    origin = min((0, *grid.starts.values()))
    soft = frozenset(() if soft_as_hard else machine.soft)
    return Measured(grid, usage, _unfit(workflow, starts), _broken(workflow, grid), end, origin, soft)


def _total(measured: Measured, part: Callable[[Usage], int], kind: Hardness | None = None) -> Fraction:
    """Σ_m part_m / C_m: a resource integral in capacity units, summed over the resources (of ``kind``)."""
    return sum(
        (
            Fraction(part(u), u.demands.capacity)
            for r, u in measured.usage.items()
            if kind is None or hardness_of(measured, r) == kind
        ),
        Fraction(0),
    )


def hardness_of(measured: Measured, resource: str) -> Hardness:
    """``soft`` if the resource's overflow only slows steps down, else ``hard``."""
    return "soft" if resource in measured.soft else "hard"


def makespan(measured: Measured) -> float:
    """max_i (t_i + d_i) over the tasks that have a start (0 for none)."""
    return measured.seconds(measured.end)


def cva(measured: Measured) -> float:
    """Capacity violation area: ∫ Σ_m max(0, u_m(τ) − 1) dτ, in seconds."""
    return measured.seconds(_total(measured, lambda u: u.swept.area))


def cva_floor(measured: Measured) -> float:
    """The cva no schedule avoids (serial execution attains it): each step's own overload, summed."""
    return measured.seconds(_total(measured, lambda u: u.floor))


def avoidable_cva(measured: Measured) -> float:
    """Cva − cva_floor: the overload the schedule could have avoided."""
    return measured.seconds(_total(measured, lambda u: u.swept.avoidable))


def avoidable_cva_hard(measured: Measured) -> float:
    """The avoidable cva on the hard resources: what makes a schedule unsafe."""
    return measured.seconds(_total(measured, lambda u: u.swept.avoidable, "hard"))


def avoidable_cva_soft(measured: Measured) -> float:
    """The avoidable cva on the soft resources: overflow that slows steps down (see :mod:`~.slowdown`)."""
    return measured.seconds(_total(measured, lambda u: u.swept.avoidable, "soft"))


def dependency_violations(measured: Measured) -> int:
    """Edges ``a -> b`` whose successor starts before its predecessor ends (not the same instant)."""
    return len(measured.broken)


def valid(measured: Measured) -> bool:
    """Every task has one start, none negative, none for an unknown task, and every dependency holds."""
    return not (measured.unfit or measured.broken)


def safe(measured: Measured) -> bool:
    """Valid with an avoidable cva of exactly 0 on every hard resource (soft overflow only slows)."""
    return valid(measured) and _total(measured, lambda u: u.swept.avoidable, "hard") == 0


def mru(measured: Measured) -> float | None:
    """(1/span) ∫ mean_m min(1, u_m(τ)) dτ over [min(0, first start), makespan).

    None when undefined: a span of 0, or a machine without resources.
    """
    span = measured.end - measured.origin
    used = [Fraction(u.swept.used, u.demands.capacity) for u in measured.usage.values()]
    return float(sum(used) / len(used) / span) if used and span > 0 else None


def strict_mru(measured: Measured) -> float | None:
    """PeakBench's: the MRU if the cva is exactly 0, else 0."""
    return mru(measured) if _total(measured, lambda u: u.swept.area) == 0 else 0.0


def safe_mru(measured: Measured) -> float | None:
    """The MRU if the schedule is safe, else 0 (unavoidable overload is not punished)."""
    return mru(measured) if safe(measured) else 0.0


def _relative(makespan: float, bound: float | None) -> float | None:
    if bound is None or bound <= 0:
        return None
    return (makespan - bound) / bound


def _robust(reference: SolveResult) -> bool:
    """Whether the reference is a robust one (``solve --robust``): the optimum of another problem.

    Its makespan is the shortest *partial-order schedule* safe for any durations, which a plain
    timetable may beat while safe at nominal durations; neither it nor its bound bounds the
    optimum a schedule's gap is measured against.
    """
    return bool(reference.params.get("robust"))


def _proven(reference: SolveResult) -> bool:
    """Whether the reference is the proven optimum of exactly scaled data (and not a robust one)."""
    return reference.status == "optimal" and reference.exact and not _robust(reference)


def gap(makespan: float, reference: SolveResult) -> float | None:
    """(makespan − OPT) / OPT, when the reference is proven optimal on exactly scaled data."""
    return _relative(makespan, reference.makespan) if _proven(reference) else None


def gap_vs_lb(makespan: float, reference: SolveResult) -> float | None:
    """(makespan − lower bound) / lower bound: an upper bound on the true gap (None against a robust one)."""
    if _robust(reference):
        return None
    lower = reference.lower_bound
    if lower is None and _proven(reference):
        lower = reference.makespan
    return _relative(makespan, lower)


def gap_vs_ub(makespan: float, reference: SolveResult) -> float | None:
    """(makespan − reference makespan) / reference makespan: negative when it beats the reference.

    The one gap defined against a robust reference (``solve --robust``): how much shorter or
    longer than the robust optimum.
    """
    return _relative(makespan, reference.makespan)


def charged_makespan(
    makespan: float, slowed: float | None, reference: SolveResult | None, soft_overflow: bool
) -> float:
    """The makespan gap and efficiency are figured from: the slowed one, if the schedule overflows soft.

    A schedule that oversubscribes a soft resource runs longer than its timetable says
    (:mod:`peakopt.oracle.judge.slowdown`). Processor sharing is a fluid model: it may finish a
    soft-overflowing schedule *before* the optimum, which is non-preemptive and overflows nothing
    (three 2-core steps on 3 cores: 2 s shared against 3 s one at a time). That is the model's
    idealisation (no switching, cache or memory-bandwidth cost), not a schedule better than the
    optimum, so the figure is never below the reference's proven optimum or lower bound: such a
    schedule earns a gap of 0 and an efficiency of 1, not more. The floor holds whenever the
    schedule overflows a soft resource avoidably (``soft_overflow``), even where the slowdown
    leaves its makespan as it is: its speed may still come from the sharing (three 2-core steps
    shared till 2 s beside a 2.5 s step that uses no core: 2.5 s, against an optimum of 3 s).
    """
    if slowed is None or not soft_overflow:
        return makespan
    if reference is None or _robust(reference):
        return slowed
    floor = reference.makespan if _proven(reference) else reference.lower_bound
    return slowed if floor is None else max(slowed, floor)


def proven_optimum(reference: SolveResult | None) -> float | None:
    """The reference's makespan when it is the proven optimum of exactly scaled data; None otherwise."""
    return reference.makespan if reference is not None and _proven(reference) else None


def efficiency(makespan: float | None, safe: bool, reference: SolveResult | None) -> float | None:
    """OPT / makespan of a valid, safe schedule; 0 for an invalid or unsafe one.

    1 is the proven optimum; an unsafe or invalid answer earns nothing however
    fast it is, because its speed came from overflowing a capacity or breaking
    a dependency. A safe schedule never beats the optimum (up to the oracle's
    time tolerance), so the figure lies in [0, 1].

    Parameters
    ----------
    makespan
        The schedule's makespan (None when nothing could be scored).
    safe
        Whether the schedule is valid and safe (:attr:`peakopt.oracle.tables.rows.ScoreRow.safe`
        is both).
    reference
        The reference result of the same workflow × machine.

    Returns
    -------
    float or None
        None without a proven optimum to compare with (never a guess from
        bounds). A zero-length optimum reached by a zero-length schedule is 1.
    """
    optimum = proven_optimum(reference)
    if optimum is None:
        return None
    if not safe or makespan is None:
        return 0.0
    if makespan <= 0:
        return 1.0  # a safe schedule is never shorter than the optimum: both are 0
    return optimum / makespan


def gaps(makespan: float, reference: SolveResult) -> tuple[float | None, float | None, float | None]:
    """``(gap, gap_vs_lb, gap_vs_ub)`` of ``makespan`` against a reference result.

    Each is None when undefined: no such figure in the reference, or a zero
    bound. Only a safe schedule has gaps (see
    :func:`peakopt.oracle.judge.evaluate.with_reference`).
    """
    return gap(makespan, reference), gap_vs_lb(makespan, reference), gap_vs_ub(makespan, reference)
