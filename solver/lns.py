"""Large-neighbourhood search on top of CP-SAT: relax part of the incumbent, re-solve it, keep the better.

On instances of ninety tasks and more CP-SAT's own search with two workers
improves the heuristic schedule slowly: the model is too large to search as a
whole in seconds. LNS keeps most of the incumbent and re-solves the rest.
What is kept is not frozen in time: its pieces are chained by a resource flow
of the incumbent (each piece takes its units from pieces that end before it
starts there), so they may all move earlier together, and any schedule that
respects those chains and the precedences is feasible for the kept pieces
among themselves (a concurrent set of chained pieces is an antichain of the
flow, which carries at most the capacity). The relaxed tasks keep only their
precedences and the cumulatives, which still count every piece. The incumbent
is a solution of every such model (its hint), so a step never loses it.

Neighbourhoods (a portfolio, chosen in proportion to how often each improved
lately): the tasks starting nearest a random time (a time window), the users
of one resource nearest a random time (a resource-conflict set), and a run of
consecutive tasks in start order (a random block). Each has its own size,
grown when its sub-problem was solved to optimality without gain (the
neighbourhood was too small to hold a better schedule) and shrunk when the
sub-problem ran out of time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from peakopt.solver.cpsat import CpsatOptions, build
from peakopt.solver.decide import NOTHING
from peakopt.solver.feasibility import end
from peakopt.solver.flow import chains, left_shift
from peakopt.solver.scaling import IntegerProblem

#: Fewest and (share of all) most tasks a neighbourhood relaxes, and the size it starts at.
MIN_SIZE, MAX_SHARE, FIRST_SIZE = 4, 0.6, 24
#: Seconds one sub-problem may take: at least, at most, and the share of the time left.
MIN_STEP, MAX_STEP, STEP_SHARE = 0.2, 3.0, 0.1
#: Problems of at least this many tasks re-solve a window with the rest fixed, then shift left
#: (:func:`window_and_solve`); smaller ones re-solve the whole model with the rest chained.
WINDOWED_FROM = 400
#: How sizes adapt (factor) and how fast a neighbourhood's score forgets (weight of the last step).
GROW, LEARN = 1.25, 0.3


@dataclass
class Neighbourhood:
    """One kind of neighbourhood, its current size and its recent success."""

    name: str
    pick: Callable[[IntegerProblem, Sequence[int], int, random.Random], set[int]]
    size: float = FIRST_SIZE
    score: float = 1.0

    def adapt(self, improved: bool, optimal: bool, tasks: int) -> None:
        """Learn from one step: a better score on gain, a larger size after an optimum without gain."""
        self.score = (1 - LEARN) * self.score + LEARN * (1.0 if improved else 0.05)
        if not improved:
            self.size = self.size * GROW if optimal else self.size / GROW
        self.size = min(max(self.size, MIN_SIZE), max(MIN_SIZE, MAX_SHARE * tasks))


def _nearest(candidates: Sequence[int], key: Callable[[int], float], count: int) -> set[int]:
    return set(sorted(candidates, key=key)[:count])


def time_window(problem: IntegerProblem, starts: Sequence[int], count: int, rng: random.Random) -> set[int]:
    """The ``count`` tasks starting nearest a random time of the incumbent."""
    at = rng.randrange(max(end(problem, starts), 1))
    return _nearest(range(problem.size), lambda i: abs(starts[i] - at) + rng.random(), count)


def conflict_set(problem: IntegerProblem, starts: Sequence[int], count: int, rng: random.Random) -> set[int]:
    """The ``count`` users of one random resource running nearest a random time."""
    if not problem.capacity:
        return time_window(problem, starts, count, rng)
    m = rng.randrange(len(problem.capacity))
    users = [i for i, pieces in enumerate(problem.pieces) if any(p.demand[m] for p in pieces)]
    if not users:
        return time_window(problem, starts, count, rng)
    at = rng.randrange(max(end(problem, starts), 1))

    def distance(i: int) -> float:
        return max(starts[i] - at, at - starts[i] - problem.length[i], 0) + rng.random()

    return _nearest(users, distance, count)


def block(problem: IntegerProblem, starts: Sequence[int], count: int, rng: random.Random) -> set[int]:
    """``count`` consecutive tasks in start order, from a random one."""
    order = sorted(range(problem.size), key=lambda i: (starts[i], i))
    first = rng.randrange(max(len(order) - count, 0) + 1)
    return set(order[first : first + count])


def portfolio() -> list[Neighbourhood]:
    """The neighbourhoods, each at its first size."""
    return [
        Neighbourhood("window", time_window),
        Neighbourhood("conflict", conflict_set),
        Neighbourhood("block", block),
    ]


@dataclass
class Move:
    """What one sub-problem gave: a better schedule (or None), and whether it was solved to optimality."""

    starts: list[int] | None
    optimal: bool


def configure(solver: cp_model.CpSolver) -> None:
    """Sub-problem search settings: CP-SAT's own search without the LP relaxation.

    The sub-problems are small and tightly chained; measured on j90 the LP only slowed them.
    """
    solver.parameters.linearization_level = 0


#: Solves a model within the seconds given: its status and solver, or None once the run is done.
SolveModel = Callable[[cp_model.CpModel, float], tuple[cp_model.CpSolverStatus, cp_model.CpSolver] | None]


def relax_and_solve(
    problem: IntegerProblem,
    incumbent: Sequence[int],
    relaxed: set[int],
    solve: SolveModel,
    seconds: float,
    options: CpsatOptions,
) -> Move:
    """Re-solve the ``relaxed`` tasks, the others chained by the incumbent's resource flow."""
    horizon = end(problem, incumbent)
    kept = set(range(problem.size)) - relaxed
    plain = CpsatOptions(cliques=False, makespan_interval=options.makespan_interval, orderings=False)
    model = build(problem, horizon=horizon, lower=0, found=NOTHING, options=plain, minimise=False)
    # the makespan first, then the sum of starts: a plateau of equal makespans is left-shifted,
    # which opens room for the next steps
    weight = problem.size * horizon + 1
    model.model.minimize(weight * model.makespan + sum(model.starts[i] for i in relaxed))
    for a, b in chains(problem, incumbent, kept):
        first, second = problem.pieces[a.task][a.piece], problem.pieces[b.task][b.piece]
        model.model.add(
            model.starts[b.task] + second.offset >= model.starts[a.task] + first.offset + first.size
        )
    for var, value in zip(model.starts, incumbent, strict=True):
        model.model.add_hint(var, value)
    model.model.add_hint(model.makespan, horizon)
    solved = solve(model.model, seconds)  # the caller's solver, set up by configure()
    if solved is None:
        return Move(None, False)
    status, solver = solved
    optimal = status == cp_model.OPTIMAL
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Move(None, False)
    starts = [int(solver.value(s)) for s in model.starts]
    return Move(starts if rank(problem, starts) < rank(problem, incumbent) else None, optimal)


def window_and_solve(
    problem: IntegerProblem,
    incumbent: Sequence[int],
    relaxed: set[int],
    solve: SolveModel,
    seconds: float,
    succs: Sequence[Sequence[int]],
) -> Move:
    """Re-solve the ``relaxed`` tasks within their span of the incumbent, everything else fixed in time.

    For problems too large to model whole at every step: the model holds the
    relaxed tasks and, as fixed intervals, the pieces of others that overlap
    their span [A, B); relaxed tasks stay within it, after their fixed
    predecessors and before their fixed successors, and are packed to the
    left (the least sum of starts). The caller then shifts the whole schedule
    left (:func:`peakopt.solver.flow.left_shift`), which turns the room made
    into a shorter makespan.
    """
    first = min(incumbent[i] for i in relaxed)
    last = max(incumbent[i] + problem.length[i] for i in relaxed)
    model = cp_model.CpModel()
    starts: dict[int, cp_model.IntVar] = {}
    for j in sorted(relaxed):
        low = max([first, *(incumbent[i] + problem.length[i] for i in problem.preds[j] if i not in relaxed)])
        high = min([last, *(incumbent[k] for k in succs[j] if k not in relaxed)]) - problem.length[j]
        starts[j] = model.new_int_var(low, max(low, high), f"s{j}")
        model.add_hint(starts[j], incumbent[j])
        model.add(starts[j] <= high)  # an empty window (never for the incumbent) makes it infeasible
    for j in relaxed:
        for i in problem.preds[j]:
            if i in relaxed:
                model.add(starts[j] >= starts[i] + problem.length[i])
    for m, cap in enumerate(problem.capacity):
        intervals, demands = [], []
        for i, pieces in enumerate(problem.pieces):
            for k, p in enumerate(pieces):
                if p.size == 0 or p.demand[m] == 0:
                    continue
                if i in relaxed:
                    intervals.append(
                        model.new_fixed_size_interval_var(starts[i] + p.offset, p.size, f"p{i}_{k}")
                    )
                elif incumbent[i] + p.offset < last and incumbent[i] + p.offset + p.size > first:
                    intervals.append(
                        model.new_fixed_size_interval_var(incumbent[i] + p.offset, p.size, f"f{i}_{k}")
                    )
                else:
                    continue
                demands.append(p.demand[m])
        if intervals:
            model.add_cumulative(intervals, demands, cap)
    model.minimize(sum(starts.values()))
    solved = solve(model, seconds)
    if solved is None or solved[0] not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Move(None, False)
    status, solver = solved
    found = list(incumbent)
    for j, var in starts.items():
        found[j] = int(solver.value(var))
    better = sum(found) < sum(incumbent)
    return Move(found if better else None, status == cp_model.OPTIMAL)


def rank(problem: IntegerProblem, starts: Sequence[int]) -> tuple[int, int]:
    """What LNS minimises: the makespan, then the sum of starts."""
    return end(problem, starts), sum(starts)


@dataclass
class Lns:
    """An LNS run's state: the neighbourhoods, its random source, and the steps taken."""

    problem: IntegerProblem
    seed: int
    hoods: list[Neighbourhood] = field(default_factory=portfolio)
    steps: int = 0
    gains: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.windowed = self.problem.size >= WINDOWED_FROM
        self.succs: list[list[int]] = [[] for _ in range(self.problem.size)]
        for j, preds in enumerate(self.problem.preds):
            for i in preds:
                self.succs[i].append(j)

    def choose(self) -> Neighbourhood:
        """A neighbourhood, with odds in proportion to its score."""
        return self.rng.choices(self.hoods, weights=[h.score for h in self.hoods])[0]

    def step(
        self,
        incumbent: Sequence[int],
        seconds: float,
        solve: SolveModel,
        options: CpsatOptions,
    ) -> list[int] | None:
        """One step from ``incumbent``: a better schedule, or None."""
        hood = self.choose()
        count = min(self.problem.size, max(MIN_SIZE, round(hood.size)))
        relaxed = hood.pick(self.problem, incumbent, count, self.rng)
        if self.windowed:
            found = window_and_solve(self.problem, incumbent, relaxed, solve, seconds, self.succs)
            if found.starts is not None:
                found.starts = left_shift(self.problem, found.starts)
        else:
            found = relax_and_solve(self.problem, incumbent, relaxed, solve, seconds, options)
        self.steps += 1
        hood.adapt(found.starts is not None, found.optimal, self.problem.size)
        if found.starts is not None:
            self.gains += 1
        return found.starts

    def summary(self) -> str:
        """The phase note: steps, gains and the sizes reached."""
        sizes = ",".join(f"{h.name}={round(h.size)}" for h in self.hoods)
        kind = "windowed" if self.windowed else "chained"
        return f"lns:{kind}:{self.steps} steps:{self.gains} better:{sizes}"


def step_seconds(left: float) -> float:
    """Seconds for the next sub-problem, from the time left."""
    return min(MAX_STEP, max(MIN_STEP, STEP_SHARE * left))


def search_neighbourhoods(
    problem: IntegerProblem,
    current: Callable[[], list[int]],
    offer: Callable[[list[int]], None],
    done: Callable[[], bool],
    deadline: float,
    solve: SolveModel,
    options: CpsatOptions,
    seed: int,
) -> str:
    """LNS steps from the shared incumbent (``current``) until ``done`` or the deadline; the phase note.

    ``current`` gives the best schedule found by any search of the run, so
    that LNS continues from others' schedules too; ``offer`` shares its own.
    """
    lns = Lns(problem, seed)
    mine = current()
    if lns.windowed:
        mine = left_shift(problem, mine)
        if end(problem, mine) < end(problem, current()):
            offer(mine)
    while not done():
        left = deadline - time.monotonic()
        if left < MIN_STEP / 2:
            break
        shared = current()
        if end(problem, shared) < end(problem, mine):
            mine = shared
        found = lns.step(mine, min(left, step_seconds(left)), solve, options)
        if found is not None:
            if end(problem, found) < end(problem, mine):
                offer(found)
            mine = found
    return lns.summary()
