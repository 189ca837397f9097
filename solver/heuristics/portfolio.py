"""Several heuristics on one instance, keeping the shortest schedule: best-rule and best_schedule."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from peakopt.models import Machine, Schedule, Workflow
from peakopt.solver.heuristics.arrays import Problem, compile_problem
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.rules import RULES, Keys, rule_keys
from peakopt.solver.heuristics.sampling import sample
from peakopt.solver.heuristics.sgs import parallel_sgs, priority_order, serial_sgs

SCHEMES = ("serial", "parallel")

#: best_schedule's efforts: the fast one is for the exact solver's hint on
#: every call; the thorough one adds every rule and biased sampling.
EFFORTS = ("fast", "thorough")

#: (scheme, rule) pairs of the fast portfolio, each followed by forward-backward improvement:
#: two cheap serial passes that complement each other (chosen on PSPLIB j30 and
#: random 5-15-step agent workflows among all pairs; see the README).
FAST = (("serial", "lst"), ("serial", "fifo"))

#: Biased-sampling passes of the thorough portfolio (each improved).
THOROUGH_SAMPLES = 1000


def single_pass(
    problem: Problem, scheme: str, keys: Keys, halt: Callable[[], bool] | None = None
) -> list[float]:
    """One pass of ``scheme`` (``serial`` or ``parallel``) with priority ``keys`` (polling ``halt``)."""
    if scheme == "serial":
        return serial_sgs(problem, priority_order(problem, keys), halt)
    return parallel_sgs(problem, keys, halt)


class Best:
    """The shortest schedule offered so far (ties keep the first)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.start: list[float] = []
        self.span = math.inf
        self.bound = problem.lower_bound + problem.eps

    def offer(self, start: list[float], span: float | None = None) -> None:
        """Keep ``start`` if it is shorter than the best so far."""
        span = self.problem.makespan(start) if span is None else span
        if span < self.span - self.problem.eps:
            self.start, self.span = start, span

    @property
    def proven(self) -> bool:
        """Whether the best reaches the lower bound (nothing can beat it)."""
        return self.span <= self.bound


def try_passes(best: Best, pairs: Sequence[tuple[str, str]], *, justify: bool) -> None:
    """Offer one pass per (scheme, rule), improved if ``justify``; stop once proven optimal."""
    keys: dict[str, Keys] = {}
    seen: set[tuple[float, ...]] = set()  # rules often agree on small instances
    for scheme, rule in pairs:
        if best.proven:
            return
        if rule not in keys:
            keys[rule] = rule_keys(best.problem, rule)
        start = single_pass(best.problem, scheme, keys[rule])
        if tuple(start) in seen:
            continue
        seen.add(tuple(start))
        if justify:
            best.offer(*improve(best.problem, start))
        else:
            best.offer(start)


def every_rule() -> list[tuple[str, str]]:
    """Every deterministic rule in both schemes."""
    return [(scheme, rule) for rule in RULES for scheme in SCHEMES]


def best_rule(problem: Problem, *, justify: bool = False) -> list[float]:
    """The best single pass over every deterministic rule and both schemes (PeakBench's Best Rule)."""
    best = Best(problem)
    try_passes(best, every_rule(), justify=justify)
    return best.start


def best_starts(problem: Problem, effort: str, seed: int) -> list[float]:
    """The portfolio behind :func:`best_schedule`, on compiled arrays."""
    if effort not in EFFORTS:
        raise ValueError(f"effort must be one of {EFFORTS}, got {effort!r}")
    best = Best(problem)
    try_passes(best, FAST, justify=True)
    if effort == "thorough":
        try_passes(best, [pair for pair in every_rule() if pair not in FAST], justify=True)
        if not best.proven:
            best.offer(
                *sample(
                    problem, rule_keys(problem, "lft"), THOROUGH_SAMPLES, random.Random(seed), justify=True
                )
            )
    return best.start


def best_schedule(
    workflow: Workflow, machine: Machine | None, *, seed: int = 0, effort: str = "fast"
) -> Schedule:
    """The shortest safe schedule of a small portfolio of heuristics.

    Every member is resource-aware with demands clamped to the capacities, so
    the result is safe (the oracle's ``avoidable_cva`` is 0) and dependency-
    valid. The portfolio stops as soon as a schedule meets the instance's
    critical-path/energy lower bound.

    Parameters
    ----------
    workflow, machine
        The instance; without a machine the result is the resource-blind
        earliest-start schedule.
    seed
        Seed of the thorough portfolio's sampling.
    effort
        ``fast``: serial LST and serial FIFO, each with forward-backward
        improvement (about half a millisecond on a 15-step workflow).
        ``thorough``: also every rule in both schemes with improvement, and
        1,000 biased random samples with improvement.

    Returns
    -------
    Schedule
        With ``source`` ``best:<effort>``.
    """
    problem = compile_problem(workflow, machine)
    return to_schedule(problem, best_starts(problem, effort, seed), f"best:{effort}")


def to_schedule(problem: Problem, start: list[float], source: str) -> Schedule:
    """A :class:`Schedule` of the start times by position."""
    return Schedule(
        workflow=problem.workflow,
        machine=problem.machine,
        starts=dict(zip(problem.ids, start, strict=True)),
        source=source,
    )
