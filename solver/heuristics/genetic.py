"""A steady-state genetic algorithm on activity lists, each child justified (Hartmann 1998; Valls 2005).

An individual is a precedence-feasible activity list, decoded by the serial
SGS and then improved by serial forward-backward passes (:mod:`.improve`,
Valls et al.'s double justification); its list is then replaced by the
order of the improved schedule's starts, so that what the population
inherits is the justified schedule, not the raw list.

Children come from two-point crossover of two parents chosen by binary
tournament, then adjacent swaps of unrelated tasks; a child that would join
the population is improved again with the parallel passes too. A child
better than the worst individual, and not a copy of one, takes its place. It
runs until a deadline or until told to stop, reports every improvement at
once, and adopts better schedules found elsewhere, so that it and an exact
search beside it share one incumbent. The deadline and the stop are also
polled inside each child's passes (every :data:`~.sgs.CHECK_EVERY` tasks):
a child unfinished then is given up, so that the run ends on time whatever
the size (one child of 1,500 tasks takes a second or more). From
:data:`LARGE_FROM` tasks, where a run of a minute makes only dozens of
children, the population is filled with improved passes instead of serially
justified biased samples (:func:`improved_starts`).

Measured on six hard PSPLIB j90 instances at 10 s, where CP-SAT with 2
workers ends 7.2 % above the best known makespans (summed), this alone on one
worker ends 2.7–3.1 % above them over two seeds (4.2 % with a population of
40 and no second improvement); beside CP-SAT in :func:`peakopt.solver.solve` it
halves the textbook model's deviation on j90 (``docs/solver.md``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence

from peakopt.solver.heuristics.arrays import Problem
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.portfolio import every_rule, single_pass
from peakopt.solver.heuristics.rules import rule_keys
from peakopt.solver.heuristics.sampling import biased_order, regret_offset
from peakopt.solver.heuristics.sgs import Stopped, priority_order, serial_sgs

#: Individuals kept (measured on six hard j90 instances at 10 s: 80–150 alike, 40 worse by 1 %).
POPULATION = 100
#: Chance that each adjacent pair of a child's list is swapped (when the two are unrelated).
MUTATION = 0.05
#: From this many tasks the population is filled with improved passes (:func:`improved_starts`):
#: every rule's, then biased samples', each improved with the parallel passes too, then
#: justified. Measured on ``large_workflow(1000)``: there the GA's children never beat the
#: incumbent in 50 s (a child takes a second; biased samples justified by serial passes
#: alone end 3 % above it), but improved passes spread over about 1 % and the best of
#: them beats the fast portfolio's.
LARGE_FROM = 1000


def start_order(problem: Problem, start: Sequence[float]) -> list[int]:
    """A schedule's activity list: by start, a predecessor first on a tie (zero lengths).

    The serial SGS on it starts no task later than ``start`` does (a feasible ``start``).
    """
    rank = problem.rank
    return sorted(range(problem.size), key=lambda j: (start[j], rank[j]))


class Individual:
    """A justified schedule and the activity list that gives it."""

    __slots__ = ("order", "span", "start")

    def __init__(self, problem: Problem, start: list[float], halt: Callable[[], bool] | None = None) -> None:
        """The feasible schedule ``start`` improved by serial passes (until ``halt``, if given)."""
        # serial passes only: three times as many children in the same time
        self.keep(problem, *improve(problem, start, serial_only=True, halt=halt))

    def keep(self, problem: Problem, start: list[float], span: float) -> None:
        """Take ``start`` as this individual's schedule, and its order as its list."""
        self.start, self.span, self.order = start, span, start_order(problem, start)

    def polish(self, problem: Problem, halt: Callable[[], bool] | None = None) -> None:
        """Forward-backward improvement with the parallel passes too, kept if shorter."""
        start, span = improve(problem, self.start, halt=halt)
        if span < self.span - problem.eps:
            self.keep(problem, start, span)


def improved_starts(
    problem: Problem,
    keys: Sequence[float],
    rng: random.Random,
    halt: Callable[[], bool] | None = None,
) -> Iterator[list[float]]:
    """Every deterministic rule's pass in both schemes, then biased samples' serial passes, each improved.

    Without end; every pass and improvement polls ``halt`` (:class:`~.sgs.Stopped` once it is true).
    """
    for scheme, rule in every_rule():
        yield improve(problem, single_pass(problem, scheme, rule_keys(problem, rule), halt), halt=halt)[0]
    offset = regret_offset(problem)
    while True:
        start = serial_sgs(problem, biased_order(problem, keys, offset, rng), halt)
        yield improve(problem, start, halt=halt)[0]


def crossover(mother: Sequence[int], father: Sequence[int], rng: random.Random) -> list[int]:
    """Two-point crossover: the mother's head, the father's middle, the mother's tail (in their orders).

    Each part keeps its parent's relative order, so the child is precedence-feasible
    when both parents are.
    """
    size = len(mother)
    first, second = sorted((rng.randint(0, size), rng.randint(0, size)))
    child = list(mother[:first])
    taken = set(child)
    for task in father:
        if len(child) >= second:
            break
        if task not in taken:
            child.append(task)
            taken.add(task)
    child.extend(task for task in mother if task not in taken)
    return child


def swap_neighbours(order: list[int], preds: Sequence[frozenset[int]], rng: random.Random) -> None:
    """Swap adjacent tasks with probability :data:`MUTATION` each, unless the first precedes the second.

    Only a direct predecessor can sit right before its successor, so the list stays feasible.
    """
    draw = rng.random
    for i in range(len(order) - 1):
        if draw() < MUTATION and order[i] not in preds[order[i + 1]]:
            order[i], order[i + 1] = order[i + 1], order[i]


def evolve(
    problem: Problem,
    keys: Sequence[float],
    deadline: float,
    rng: random.Random,
    *,
    offer: Callable[[list[float], float], None] | None = None,
    stop: Callable[[], bool] | None = None,
    population: int = POPULATION,
    seeds: Sequence[Sequence[int]] = (),
    adopt: Callable[[float], list[float] | None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    large_from: int = LARGE_FROM,
) -> tuple[list[float], float]:
    """The best schedule found by ``deadline`` (``time.monotonic()``), or once ``stop()`` is true.

    Parameters
    ----------
    problem
        The instance.
    keys
        Priorities (lower first) of the first individual's list and of the
        biased sampling that seeds the rest (e.g. latest finish times).
    deadline
        When to return, on the ``clock``. The first individual's serial pass
        is always made; its improvement, and every later child, stop at the deadline.
    rng
        The random source (a seeded one repeats the same run, given the same number of children).
    offer
        Called with each better schedule (start times by position) and its makespan.
    stop
        Polled with the clock, between children and inside their passes; true ends the run.
    population
        Individuals kept.
    seeds
        Activity lists (precedence-feasible) to start the population with, after the rule's own.
    adopt
        Polled between children with the best makespan so far: a shorter schedule found
        elsewhere (start times by position), or None. Its order joins the population.
    clock
        The time ``deadline`` is on (a test's fake one counts work instead).
    large_from
        From this many tasks the children that fill the population are
        :func:`improved_starts`' schedules (justified like every child).

    Returns
    -------
    tuple
        The best schedule (start times by position) and its makespan, among the
        individuals finished by the deadline (a child in progress then is given up).
    """
    offset = regret_offset(problem)
    bound = problem.lower_bound + problem.eps
    preds = [frozenset(p) for p in problem.preds]

    def halted() -> bool:
        return clock() >= deadline or (stop is not None and stop())

    def built(order: Sequence[int]) -> Individual:
        return Individual(problem, serial_sgs(problem, order, halted), halted)

    people = [Individual(problem, serial_sgs(problem, priority_order(problem, keys)), halted)]
    for seed in seeds:
        try:
            people.append(built(seed))
        except Stopped:
            break
    best = min(people, key=lambda p: p.span)
    if offer is not None:
        offer(best.start, best.span)
    fills = improved_starts(problem, keys, rng, halted) if problem.size >= large_from else None

    def tournament() -> Individual:
        a, b = rng.choice(people), rng.choice(people)
        return a if a.span <= b.span else b

    while best.span > bound and not halted():
        full = len(people) >= population
        # the individual a child would replace (found once per child: polishing and replacing use it)
        worst = max(range(len(people)), key=lambda k: people[k].span) if full else -1
        found = adopt(best.span) if adopt is not None else None
        try:
            if found is not None:
                child = built(start_order(problem, found))
            elif not full:
                child = (
                    Individual(problem, next(fills), halted)
                    if fills is not None
                    else built(biased_order(problem, keys, offset, rng))
                )
            else:
                order = crossover(tournament().order, tournament().order, rng)
                swap_neighbours(order, preds, rng)
                child = built(order)
                if child.span <= people[worst].span:
                    child.polish(problem, halted)
        except Stopped:
            break
        if halted():  # its improvement may have been cut short: given up with the run
            break
        if not full:
            people.append(child)
        else:
            if child.span >= people[worst].span or any(p.order == child.order for p in people):
                continue
            people[worst] = child
        if child.span < best.span - problem.eps:
            best = child
            if offer is not None:
                offer(best.start, best.span)
    return best.start, best.span
