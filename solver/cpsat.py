"""The CP-SAT model: one fixed-offset interval per piece, a cumulative per resource, precedences.

A fresh model per solve, built by one short function per family (variables,
precedences, cumulatives, redundant no-overlaps, objective). What the
benchmarks showed to help (see the README's figures) is on by default in
:class:`CpsatOptions`; the rest can be switched on to measure it again.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ortools.sat.python import cp_model

from peakopt.solver.bounds import windows
from peakopt.solver.conflicts import ConflictStructure, Node
from peakopt.solver.scaling import IntegerProblem

#: The decision searches of the destructive steps: from above (UB − 1) the problem as it is or
#: time-mirrored, from below (raising the lower bound) as it is or time-mirrored.
Prover = Literal["forward", "mirrored", "lower", "lower-mirrored"]
#: The provers that ask from below, and those that ask the time-mirrored problem.
FROM_BELOW: frozenset[Prover] = frozenset({"lower", "lower-mirrored"})
MIRRORED: frozenset[Prover] = frozenset({"mirrored", "lower-mirrored"})


@dataclass(frozen=True)
class CpsatOptions:
    """Model and search switches (the defaults are what measured best).

    Attributes
    ----------
    cliques
        Greedy cliques of the conflict graph as redundant no-overlap constraints.
    makespan_interval
        An interval [makespan, horizon) using the full capacity of every cumulative.
    destructive
        After the optimisation phase, prove ``makespan <= UB - 1`` infeasible (or improve).
    optimise_share
        Share of the time limit given to the first optimisation phase (all
        workers) before the provers start, when ``destructive``.
    orderings
        A literal "a before b" per pair of pieces that exceed a capacity together.
    provers
        The decision searches run side by side after the first phase, one
        worker each (the mirrored one on coarse time grids only); workers
        left over keep optimising.
    decision_plain
        On coarse time grids, ask the decision question of the plain model
        (no cliques, no makespan interval).
    decision_lp
        Keep CP-SAT's LP relaxation in those plain decision searches.
    presolve
        CP-SAT's presolve. Off pays only for tiny models solved by the thousand (each
        scenario's own optimum for the perfect-information bound: measured 17 → 9 ms each on
        the bundled suite's hardest scenarios, the same proofs).
    lns_from
        Problems of at least this many tasks run large-neighbourhood search
        (:mod:`peakopt.solver.lns`) on one worker in place of the last prover.
        Measured on six hard j90 instances at 10 s (2 workers) LNS in place of the
        mirrored prover lost (makespans summing to 814 against 809), and on the
        1,000-task workflow it found nothing better in 50 s: it runs where whole
        models are too large for CP-SAT to improve at all.
    genetic_from
        Problems of at least this many tasks (and fewer than ``lns_from``), without
        pins, run the genetic algorithm (:mod:`peakopt.solver.heuristics.genetic`)
        on one worker for the whole search, the CP-SAT searches on the others; the
        two share every better schedule. Measured on PSPLIB j90 (90 tasks) at 10 s
        with 2 workers, the mean deviation from the best known makespans of a
        40-instance sample is 0.53 % against the textbook model's 1.09 % in the same
        session (0.72 % when it started only after the first optimisation phase, in
        place of the mirrored prover), one more instance proven. j30 (30 tasks)
        keeps both provers, which prove it fastest.
    genetic_prover
        The prover that comes first where the genetic algorithm runs (with 2 workers,
        the only one beside it). From above (``"forward"``) it also finds shorter
        schedules and proves an optimal incumbent in one question; from below
        (``"lower"``) it raises the bound while the genetic algorithm shortens the
        makespan. Measured at 10 s, 2 workers, side by side per instance on the
        stratified 120-instance samples: on j120 ``"lower"`` put the bound 0.97 % below
        the best known against 1.27 % (raised on 15 instances, lowered on none, in both
        halves of the tuning split) at the same makespans (1.662 % above the best known
        against 1.656 %); on j90 it raised bounds too (0.61 % against 0.79 % below) but
        cost makespan (0.48 % against 0.45 %) and two proofs of optimality, which from
        above take one question. So the default stays ``"forward"``.
    """

    cliques: bool = True
    makespan_interval: bool = True
    destructive: bool = True
    optimise_share: float = 0.02
    orderings: bool = True
    provers: tuple[Prover, ...] = ("forward", "mirrored")
    decision_plain: bool = True
    decision_lp: bool = False
    presolve: bool = True
    lns_from: int = 2000
    genetic_from: int = 60
    genetic_prover: Prover = "forward"


@dataclass
class Model:
    """A built model and the variables read back after the solve."""

    model: cp_model.CpModel
    starts: list[cp_model.IntVar]
    makespan: cp_model.IntVar


def variables(model: cp_model.CpModel, problem: IntegerProblem, horizon: int) -> list[cp_model.IntVar]:
    """Start of each task, within its window under ``horizon`` (precedences, release, fixed)."""
    return [model.new_int_var(lo, hi, f"s{i}") for i, (lo, hi) in enumerate(windows(problem, horizon))]


def piece_intervals(
    model: cp_model.CpModel, problem: IntegerProblem, starts: Sequence[cp_model.IntVar]
) -> dict[Node, cp_model.IntervalVar]:
    """One fixed-size interval per piece, at a fixed offset from its task's start."""
    return {
        Node(i, k): model.new_fixed_size_interval_var(starts[i] + p.offset, p.size, f"p{i}_{k}")
        for i, pieces in enumerate(problem.pieces)
        for k, p in enumerate(pieces)
        if p.size > 0
    }


def precedences(model: cp_model.CpModel, problem: IntegerProblem, starts: Sequence[cp_model.IntVar]) -> None:
    """A task starts after each predecessor ends."""
    for j, preds in enumerate(problem.preds):
        for i in preds:
            model.add(starts[j] >= starts[i] + problem.length[i])


def cumulatives(
    model: cp_model.CpModel,
    problem: IntegerProblem,
    intervals: dict[Node, cp_model.IntervalVar],
    tail: cp_model.IntervalVar | None,
) -> None:
    """One cumulative per resource over the pieces that use it (demands already clamped).

    ``tail``, if given, is the interval after the makespan, using the whole
    capacity: no piece may run there, which tightens the energy reasoning.
    """
    for m, cap in enumerate(problem.capacity):
        users = [(iv, problem.pieces[n.task][n.piece].demand[m]) for n, iv in intervals.items()]
        users = [(iv, d) for iv, d in users if d > 0]
        if not users:
            continue
        if tail is not None:
            users.append((tail, cap))
        model.add_cumulative([iv for iv, _ in users], [d for _, d in users], cap)


def no_overlaps(
    model: cp_model.CpModel, intervals: dict[Node, cp_model.IntervalVar], cliques: list[list[Node]]
) -> None:
    """Redundant no-overlap constraints over cliques of pieces that never run together."""
    for clique in cliques:
        model.add_no_overlap([intervals[n] for n in clique])


def orderings(
    model: cp_model.CpModel,
    problem: IntegerProblem,
    starts: Sequence[cp_model.IntVar],
    found: ConflictStructure,
) -> None:
    """Literals "piece a ends before piece b starts", and which of them must hold.

    Of two pieces that exceed a capacity together one goes first; of a minimal
    forbidden set, some pair is ordered. CP-SAT then branches on orders instead
    of on start times, which with fine ticks (0.01 s) move one tick at a
    time: agent workflows of 12–14 steps went from unproven in 10 s to proven
    in 0.1 s.
    """
    literals: dict[tuple[Node, Node], cp_model.IntVar] = {}

    def before(a: Node, b: Node) -> cp_model.IntVar:
        if (a, b) not in literals:
            first, second = problem.pieces[a.task][a.piece], problem.pieces[b.task][b.piece]
            literal = model.new_bool_var(f"o{a.task}_{a.piece}_{b.task}_{b.piece}")
            model.add(
                starts[a.task] + first.offset + first.size <= starts[b.task] + second.offset
            ).only_enforce_if(literal)
            literals[a, b] = literal
        return literals[a, b]

    for a, b in found.pairs:
        model.add_bool_or([before(a, b), before(b, a)])
    for members in found.sets:
        model.add_bool_or([before(x, y) for x, y in itertools.permutations(members, 2)])


def objective(
    model: cp_model.CpModel,
    problem: IntegerProblem,
    starts: Sequence[cp_model.IntVar],
    lower: int,
    horizon: int,
    minimise: bool,
) -> cp_model.IntVar:
    """The makespan, at least every task's end; minimised unless this is a decision model."""
    makespan = model.new_int_var(min(lower, horizon), horizon, "makespan")
    has_succ = {i for preds in problem.preds for i in preds}
    for i in range(problem.size):
        if i not in has_succ:
            model.add(makespan >= starts[i] + problem.length[i])
    if minimise:
        model.minimize(makespan)
    return makespan


def build(
    problem: IntegerProblem,
    *,
    horizon: int,
    lower: int,
    found: ConflictStructure,
    options: CpsatOptions,
    minimise: bool = True,
) -> Model:
    """A fresh model whose schedules all end by ``horizon``."""
    model = cp_model.CpModel()
    starts = variables(model, problem, horizon)
    intervals = piece_intervals(model, problem, starts)
    precedences(model, problem, starts)
    makespan = objective(model, problem, starts, lower, horizon, minimise)
    tail = None
    if options.makespan_interval:
        tail = model.new_interval_var(makespan, horizon - makespan, horizon, "after_makespan")
    cumulatives(model, problem, intervals, tail)
    if options.cliques:
        no_overlaps(model, intervals, found.cliques)
    if options.orderings:
        orderings(model, problem, starts, found)
    return Model(model, starts, makespan)
