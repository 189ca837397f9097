"""A steady-state genetic algorithm on activity lists, every child justified (Hartmann 1998; Valls et al. 2005).

An individual is a precedence-feasible activity list, decoded by the serial
SGS and then improved by forward-backward passes (:mod:`.improve`); its list
is then replaced by the order of the improved schedule's starts, so that
what the population inherits is the justified schedule, not the raw list
(Valls et al.'s key step: it roughly halves the deviation on PSPLIB j120).

Children come from two-point crossover of two parents chosen by binary
tournament, then adjacent swaps of unrelated tasks; a child better than the
worst individual, and not a copy of one, takes its place. It runs until a
deadline or until told to stop, and reports every improvement at once, so
that an exact search beside it can use it as its incumbent.

It is what finds good schedules of mid-sized RCPSP instances fastest:
measured on hard PSPLIB j90 instances, CP-SAT with 2 workers ends 10 s about
7 % above the best known makespans; this ends closer (see ``docs/solver.md``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from peakopt.solver.heuristics.arrays import Problem
from peakopt.solver.heuristics.improve import improve
from peakopt.solver.heuristics.sampling import REGRET_OFFSET, biased_order
from peakopt.solver.heuristics.sgs import priority_order, serial_sgs

#: Individuals kept (measured on six hard j90 instances at 10 s: 80–150 alike, 40 worse by 1 %).
POPULATION = 100
#: Chance that each adjacent pair of a child's list is swapped (when the two are unrelated).
MUTATION = 0.05
#: Justify children with serial passes only (three times as many children in the same time).
SERIAL_ONLY = True
POLISH = True


class Individual:
    """A justified schedule and the activity list that gives it."""

    __slots__ = ("order", "span", "start")

    def __init__(self, problem: Problem, order: Sequence[int], serial_only: bool = SERIAL_ONLY) -> None:
        self.keep(problem, *improve(problem, serial_sgs(problem, order), serial_only=serial_only))

    def keep(self, problem: Problem, start: list[float], span: float) -> None:
        rank = problem.rank
        self.start, self.span = start, span
        # the justified schedule's own order: by start, a predecessor first on a tie (zero lengths)
        self.order = sorted(range(problem.size), key=lambda j: (start[j], rank[j]))

    def polish(self, problem: Problem) -> None:
        """Forward-backward improvement with the parallel passes too, kept if shorter."""
        start, span = improve(problem, self.start)
        if span < self.span - problem.eps:
            self.keep(problem, start, span)


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


def mutate(order: list[int], preds: Sequence[frozenset[int]], rng: random.Random) -> None:
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
        When to return, on the ``time.monotonic()`` clock. The first
        individual is always built.
    rng
        The random source (a seeded one repeats the same run, given the same number of children).
    offer
        Called with each better schedule (start times by position) and its makespan.
    stop
        Polled between children; true ends the run.
    population
        Individuals kept.
    seeds
        Activity lists (precedence-feasible) to start the population with, after the rule's own.
    adopt
        Polled between children with the best makespan so far: a shorter schedule found
        elsewhere (start times by position), or None. Its order joins the population.

    Returns
    -------
    tuple
        The best schedule (start times by position) and its makespan.
    """
    mean = sum(problem.length) / max(1, problem.size)
    offset = max(REGRET_OFFSET * mean, 1e-9)
    bound = problem.lower_bound + problem.eps
    preds = [frozenset(p) for p in problem.preds]
    people = [Individual(problem, order) for order in [priority_order(problem, keys), *seeds]]
    best = min(people, key=lambda p: p.span)
    if offer is not None:
        offer(best.start, best.span)

    def over() -> bool:
        return best.span <= bound or time.monotonic() >= deadline or (stop is not None and stop())

    def tournament() -> Individual:
        a, b = rng.choice(people), rng.choice(people)
        return a if a.span <= b.span else b

    while not over():
        found = adopt(best.span) if adopt is not None else None
        if found is not None:
            child = Individual(problem, sorted(range(problem.size), key=lambda j: (found[j], problem.rank[j])))
        elif len(people) < population:
            child = Individual(problem, biased_order(problem, keys, offset, rng))
        else:
            order = crossover(tournament().order, tournament().order, rng)
            mutate(order, preds, rng)
            child = Individual(problem, order)
            if POLISH and child.span <= max(p.span for p in people):
                child.polish(problem)
        if len(people) < population:
            people.append(child)
        else:
            worst = max(range(len(people)), key=lambda k: people[k].span)
            if child.span >= people[worst].span or any(p.order == child.order for p in people):
                continue
            people[worst] = child
        if child.span < best.span - problem.eps:
            best = child
            if offer is not None:
                offer(best.start, best.span)
    return best.start, best.span
