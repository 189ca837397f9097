"""The frontier of an open PSPLIB instance: asking for a new best known bound, and checking an answer.

An instance is open when its best known lower bound (``best_lb``) is below its
best known makespan (``best_ub``). The question asked at the frontier is the
destructive lower bound's, at the best known lower bound itself: "is there a
schedule ending by ``best_lb``?". Infeasible would prove ``best_lb + 1`` a new
best known lower bound; feasible would give a schedule shorter than the best
known one (and close the instance). Either answer is believed only once checked
independently:

- a schedule by the oracle (:func:`peakopt.oracle.evaluate`: valid, safe, its makespan);
- an infeasibility by a second CP-SAT model of another formulation, the textbook
  one (:func:`solver_baselines.textbook_model`: interval variables with their
  ends, one cumulative per resource, no energetic windows), given a longer
  budget, on the instance and else on its reversal (every dependency turned
  round, built from the workflow rather than by the solver's time mirror: the
  same optimum, and the direction in which the mirrored prover found its proof).

The question is asked as peakopt's provers ask it (``peakopt.solver.decide``):
energetic reasoning first, then the plain decision model forwards and time
mirrored, one worker each, side by side; the first conclusive answer stops the
other.
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass
from fractions import Fraction

from ortools.sat.python import cp_model
from psplib_sets import PsplibSet
from solver_baselines import textbook_model

from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle import evaluate
from peakopt.solver.cpsat import CpsatOptions, Prover
from peakopt.solver.decide import NOTHING, Attempt, attempt, starts_of
from peakopt.solver.energetic import Windows
from peakopt.solver.feasibility import to_seconds
from peakopt.solver.milp import build as milp_model
from peakopt.solver.scaling import IntegerProblem, scale

#: The sets whose open instances are asked, and the seconds per instance for the question.
SETS = {"j90": PsplibSet("j90"), "j120": PsplibSet("j120")}
BUDGET = {"j90": 30.0, "j120": 10.0}
#: The provers of the question, one worker each.
PROVERS: tuple[Prover, ...] = ("forward", "mirrored")


@dataclass(frozen=True)
class Answer:
    """What the frontier question got: ``infeasible``, ``feasible`` or ``unknown`` (out of time).

    ``how`` names the search that answered (``energetic``, a prover, or ``none``);
    ``starts`` is the schedule in seconds when feasible.
    """

    answer: str
    how: str
    seconds: float
    starts: dict[str, float] | None = None


def _ticks(problem: IntegerProblem, target: int) -> int:
    """``target`` (PSPLIB time units) in the problem's ticks: PSPLIB data scale exactly."""
    ticks = Fraction(target) / problem.tick
    if not problem.exact or ticks.denominator != 1:
        raise ValueError(f"{target} is not on the exact time grid of the instance")
    return int(ticks)


def frontier(workflow: Workflow, machine: Machine, target: int, seconds: float) -> Answer:
    """Ask "a schedule ending by ``target``?" for at most ``seconds`` on 2 threads."""
    began = time.perf_counter()
    problem = scale(workflow, machine)
    ticks = _ticks(problem, target)
    if Windows(problem).infeasible(ticks):
        return Answer("infeasible", "energetic", time.perf_counter() - began)
    options = CpsatOptions()
    runs: dict[Prover, Attempt] = {}
    for prover in PROVERS:
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.max_time_in_seconds = max(0.01, seconds - (time.perf_counter() - began))
        solver.parameters.catch_sigint_signal = False
        runs[prover] = attempt(problem, ticks, 0, NOTHING, options, solver, prover)
    answers: dict[Prover, cp_model.CpSolverStatus] = {}

    def ask(prover: Prover) -> None:
        answers[prover] = runs[prover].solver.solve(runs[prover].model.model)
        if answers[prover] in (cp_model.INFEASIBLE, cp_model.FEASIBLE, cp_model.OPTIMAL):
            for run in runs.values():  # the first conclusive answer stops the other search
                run.solver.stop_search()

    threads = [threading.Thread(target=ask, args=(p,)) for p in PROVERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    for prover, status in answers.items():
        if status == cp_model.MODEL_INVALID:
            raise RuntimeError(f"CP-SAT rejected the {prover} model: {runs[prover].model.model.validate()}")
        if status == cp_model.INFEASIBLE:
            return Answer("infeasible", prover, elapsed)
        starts = starts_of(runs[prover], status)
        if starts is not None:
            return Answer("feasible", prover, elapsed, to_seconds(problem, starts))
    return Answer("unknown", "none", elapsed)


def reversed_instance(workflow: Workflow) -> Workflow:
    """The workflow with every dependency turned round (constant profiles only, as in PSPLIB).

    A schedule ending by ``T`` maps to one of the reversal ending by ``T`` (each start
    ``s`` to ``T - s - length``), and back: both have the same optimum. Built from the
    workflow's own edges, not by the solver's time mirror, which it checks.
    """
    if any(t.profile is not None for t in workflow.tasks):
        raise ValueError(f"{workflow.id}: only constant profiles are reversed here")
    successors: dict[str, list[str]] = {t.id: [] for t in workflow.tasks}
    for before, after in workflow.edges:
        successors[before].append(after)
    tasks = [t.model_copy(update={"depends_on": tuple(successors[t.id])}) for t in workflow.tasks]
    return Workflow.model_validate({**workflow.model_dump(), "tasks": [t.model_dump() for t in tasks]})


def confirmed_infeasible(
    workflow: Workflow, machine: Machine, target: int, seconds: float, workers: int
) -> str | None:
    """How the textbook model proves no schedule ends by ``target``, or None if it cannot.

    ``textbook`` on the instance, else ``textbook-reversed`` on its reversal
    (:func:`reversed_instance`), each given ``seconds`` on ``workers`` threads.
    """
    for how, instance in (("textbook", workflow), ("textbook-reversed", reversed_instance(workflow))):
        plain = textbook_model(instance, machine, horizon=target)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = workers
        solver.parameters.max_time_in_seconds = seconds
        solver.parameters.catch_sigint_signal = False
        if solver.solve(plain.model) == cp_model.INFEASIBLE:
            return how
    return None


def confirmed_schedule(workflow: Workflow, machine: Machine, starts: dict[str, float], target: int) -> bool:
    """Whether the oracle finds ``starts`` valid, safe and ending by ``target``."""
    score = evaluate(workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts))
    return bool(score.valid and score.safe and score.makespan <= target)


def confirmed_by_milp(
    workflow: Workflow, machine: Machine, target: int, seconds: float, workers: int
) -> bool:
    """Whether CBC proves no schedule ends by ``target`` in peakopt's time-indexed MILP.

    A third method (:mod:`peakopt.solver.milp`), not a CP-SAT search at all: for a bound the
    two CP-SAT models agree on.
    """
    import pulp

    problem = scale(workflow, machine)
    lp, _ = milp_model(problem, _ticks(problem, target), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # PuLP's bundled CBC, as peakopt's milp backend
        cbc = pulp.PULP_CBC_CMD(msg=False, timeLimit=seconds, threads=workers)
    lp.solve(cbc)
    return bool(lp.status == pulp.LpStatusInfeasible)
