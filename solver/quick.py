"""``quick_optimum``: the optimum of a small instance by the cheapest layer that proves it.

A Monte Carlo run needs the optimum of every realised scenario (the perfect-information bound:
tens of thousands of small instances, :mod:`peakopt.campaign.hindsight`), where building and
searching a CP-SAT model for each would be the whole cost. Most are settled before any model:

1. ``shortcut`` (:func:`shortcut`): the fast heuristic portfolio
   (:func:`~peakopt.solver.heuristics.portfolio.best_starts`) against the critical-path and
   energy bounds, on plain arrays;
2. ``cliques`` (:func:`cliques`): that schedule against the disjunctive clique bound on the
   exactly scaled integers (:mod:`peakopt.solver.bounds`), where the data scale exactly (a
   rounded problem's bounds are not bounds of the real one);
3. ``cpsat``: :func:`~peakopt.solver.pipeline.solve` from that schedule, one worker, a short
   time limit and no presolve; what it does not prove stays ``feasible`` with its bound.

A layer only *claims* (:class:`Claim`); the result is the oracle's verdict on the claimed
starts through the same check as every :func:`solve` result
(:func:`~peakopt.solver.checked.verified`): a claim the oracle rejects (invalid or unsafe
starts, a makespan they do not give) is an ``error`` result, never an optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from peakopt.models import Machine, Schedule, SolveResult, Workflow
from peakopt.oracle import same_time
from peakopt.solver.bounds import lower_bound
from peakopt.solver.checked import Origin, judge, verified
from peakopt.solver.conflicts import greedy_cliques
from peakopt.solver.cpsat import CpsatOptions
from peakopt.solver.heuristics import Problem, compile_problem
from peakopt.solver.heuristics.portfolio import best_starts
from peakopt.solver.pins import Pins
from peakopt.solver.pipeline import check_solve_arguments, solve
from peakopt.solver.scaling import scale

#: The layers, cheapest first; a result's ``params["layer"]`` names the one that settled it.
Layer = Literal["shortcut", "cliques", "cpsat"]
LAYERS: tuple[Layer, ...] = ("shortcut", "cliques", "cpsat")

#: CP-SAT for an instance the shortcuts leave: a tiny model, one of thousands, where presolve
#: costs more than it saves (17 → 9 ms each on the bundled suite's hardest scenarios).
TINY = CpsatOptions(presolve=False)


@dataclass(frozen=True)
class Claim:
    """What a shortcut layer says of an instance; the oracle decides what the result is.

    Attributes
    ----------
    layer
        The layer that claims it.
    starts
        Its schedule's starts, by task position (seconds).
    makespan
        The makespan it says those starts give.
    lower
        The lower bound it says it proved (seconds).
    proven
        Whether it says the schedule is optimal (its makespan meets the bound, up to the
        heuristics' relative tolerance of 1e-9).
    tick
        The time grid of the integer model its bound came from (0: it built none).
    """

    layer: Layer
    starts: tuple[float, ...]
    makespan: float
    lower: float
    proven: bool
    tick: float = 0.0


def shortcut(problem: Problem, seed: int) -> Claim:
    """The fast heuristic portfolio's schedule against the critical-path and energy bounds."""
    starts = best_starts(problem, "fast", seed)
    span = problem.makespan(starts)
    bound = problem.lower_bound
    return Claim("shortcut", tuple(starts), span, bound, span <= bound + problem.eps)


def cliques(workflow: Workflow, machine: Machine, claim: Claim, eps: float) -> Claim | None:
    """``claim``'s schedule against the clique bound of the exactly scaled integers (None: inexact data).

    ``eps`` is the heuristics' tolerance (:attr:`~peakopt.solver.heuristics.Problem.eps`).
    """
    integer = scale(workflow, machine)
    if not integer.exact:  # a rounded problem's bounds are not bounds of the real one
        return None
    bound = float(lower_bound(integer, greedy_cliques(integer)) * integer.tick)
    proven = claim.makespan <= bound + eps
    return Claim("cliques", claim.starts, claim.makespan, bound, proven, float(integer.tick))


def quick_optimum(
    workflow: Workflow, machine: Machine, *, time_limit: float = 1.0, seed: int = 0
) -> SolveResult:
    """The optimum of a small instance by the cheapest layer that proves it, checked by the oracle.

    Parameters
    ----------
    workflow, machine
        The instance (plain durations and demands, e.g. a realised scenario).
    time_limit
        Seconds of CP-SAT search (one worker) when neither shortcut proves the heuristic's
        schedule optimal.
    seed
        Seed of the heuristics and the solver.

    Returns
    -------
    SolveResult
        As :func:`solve` returns it, ``params["layer"]`` naming the layer that settled it
        (:data:`LAYERS`): a shortcut's result is ``optimal`` (solver ``quick``; ``tick`` 0 for
        ``shortcut``, which builds no integer model), or ``error`` when the oracle rejects its
        claim; the ``cpsat`` layer's is :func:`solve`'s (``optimal`` or ``feasible`` with its
        bound, ``error``). ``seconds`` counts every layer. Unlike a reference, it carries no
        content hashes (``workflow_hash`` and ``machine_hash`` are None): a hindsight bound is
        kept by its scenario's own key, and hashing the workflow cost a third of the oracle's
        check of a shortcut.

    Raises
    ------
    ValueError
        On a time limit that is not a positive finite number of seconds (whichever layer settles it).
    """
    check_solve_arguments(time_limit, 1, 0.0, "cpsat")  # whichever layer settles it
    began = time.perf_counter()
    problem = compile_problem(workflow, machine)
    claim = shortcut(problem, seed)
    if not claim.proven:
        claim = cliques(workflow, machine, claim, problem.eps) or claim
    params: dict[str, object] = {"time_limit": time_limit, "seed": seed, "layer": claim.layer}
    if claim.proven:
        starts = dict(zip(problem.ids, claim.starts, strict=True))
        score = judge(workflow, machine, starts)
        return verified(
            workflow,
            machine,
            starts,
            score,
            proven=True,
            lower=claim.lower,
            agrees=same_time(score.makespan, claim.makespan),
            pins=Pins(),
            origin=Origin("quick", params, time.perf_counter() - began, True, claim.tick, hashes=False),
        )
    hint = Schedule(
        workflow=workflow.id, machine=machine.name, starts=dict(zip(problem.ids, claim.starts, strict=True))
    )
    found = solve(workflow, machine, time_limit=time_limit, workers=1, seed=seed, hint=hint, options=TINY)
    update = {
        "params": {**found.params, "layer": "cpsat"},
        "seconds": time.perf_counter() - began,
        "workflow_hash": None,  # as the shortcuts' results: a bound is kept by its scenario's key
        "machine_hash": None,
    }
    return found.model_copy(update=update)
