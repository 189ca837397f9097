"""The genetic algorithm on its own: an activity list to execute as a policy under uncertainty.

The stochastic RCPSP literature (Ballestín 2007; Ballestín and Leus 2009) judges an *activity
list* as a policy: executed by the resource-based rule (at every decision point, the ready
activities in list order, each when it fits: the simulator's ``order`` execution with
``greedy=True``) or the activity-based one (an activity never starts before the one listed
before it: ``order``'s default). :func:`genetic_schedule` gives the genetic algorithm's best
schedule at the nominal durations (:mod:`.genetic`), whose order of starts is its activity list;
the simulator reads the list from the starts (:func:`~peakopt.oracle.uncertain.policies.plan_sequence`).
"""

from __future__ import annotations

import random
import time

from peakopt.models import Machine, Schedule, Workflow
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.heuristics.genetic import evolve
from peakopt.solver.heuristics.portfolio import to_schedule
from peakopt.solver.heuristics.rules import latest_finish


def genetic_schedule(
    workflow: Workflow, machine: Machine, *, seconds: float = 1.0, seed: int = 0
) -> Schedule:
    """The genetic algorithm's best schedule within ``seconds`` (one thread), source ``genetic``.

    Parameters
    ----------
    workflow, machine
        The instance (demands clamped to the capacities, as every heuristic does).
    seconds
        Wall-clock budget; the first individual is always built, and the search stops early
        when a schedule meets the critical-path/energy bound.
    seed
        Seed of the algorithm's random choices (how many children fit the budget depends on
        the machine's speed, so a rerun may find another schedule of the same quality).

    Returns
    -------
    Schedule
        Safe and dependency-valid; its starts in order are the algorithm's activity list.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds!r}")
    problem = compile_problem(workflow, machine)
    start, _ = evolve(problem, latest_finish(problem), time.monotonic() + seconds, random.Random(seed))
    return to_schedule(problem, start, "genetic")
