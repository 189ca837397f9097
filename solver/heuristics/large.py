"""A quick schedule for large workflows: serial passes, no improvement, in chunks of the topological order.

The fast portfolio's forward-backward improvement costs seconds from a
thousand tasks on (parallel passes over long eligible lists), and the serial
SGS grows quadratically with the tasks (each one scans the busy timeline
from its release): 0.2 s for 1,000 tasks, 22 s for 10,000. Large workflows
therefore get the fast portfolio's serial passes alone, and past
:data:`CHUNK` tasks one chunk of the topological order after another, each
starting when the previous one has ended (a barrier, so that the chunks'
timelines stay short). The exact search's LNS then improves it
(:mod:`peakopt.solver.lns`).
"""

from __future__ import annotations

from peakopt.models import Machine, Schedule, Workflow
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.heuristics.portfolio import FAST, Best, try_passes

#: Workflows of at least this many tasks get the quick schedule as the exact search's start.
QUICK_FROM = 2000
#: Tasks per chunk.
CHUNK = 1000


def quick_schedule(workflow: Workflow, machine: Machine, chunk: int = CHUNK) -> Schedule:
    """The best of the fast portfolio's serial passes (unimproved), chunk after chunk.

    Safe and dependency-valid: within a chunk the passes respect the
    capacities and the chunk's own edges, and every other predecessor is in
    an earlier chunk, which has ended before the chunk starts.
    """
    tasks = workflow.tasks
    order = workflow.topological_order
    starts: dict[str, float] = {}
    barrier = 0.0
    for first in range(0, len(order), chunk):
        members = [tasks[i] for i in order[first : first + chunk]]
        ids = {t.id for t in members}
        part = Workflow(
            id=f"{workflow.id}#{first}",
            tasks=tuple(
                t.model_copy(update={"depends_on": tuple(d for d in t.depends_on if d in ids)})
                for t in members
            ),
        )
        problem = compile_problem(part, machine)
        best = Best(problem)
        try_passes(best, FAST, justify=False)
        for task, start in zip(problem.ids, best.start, strict=True):
            starts[task] = barrier + start
        barrier = max((starts[t.id] + t.length for t in members), default=barrier)
    return Schedule(workflow=workflow.id, machine=machine.name, starts=starts, source="best:quick")
