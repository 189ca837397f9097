"""One solve of a generated large workflow in a fresh process, by this tree or a previous release's.

Kept free of top-level peakopt imports: the child puts the release's source
first on its path (``source``: a directory holding a ``peakopt`` package)
before importing anything of peakopt, so that the same session can measure
this tree and the previous release one after the other.
"""

from __future__ import annotations

import json
import multiprocessing
import queue as queues
import resource
import sys
from typing import Any


def _solve(queue: multiprocessing.Queue[str], tasks: int, limit: float, source: str | None) -> None:
    if source:
        sys.path.insert(0, source)
    from solver_baselines import large_workflow

    from peakopt.solver import solve

    workflow, machine = large_workflow(tasks)
    result = solve(workflow, machine, time_limit=limit, workers=2)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(json.dumps({"result": result.model_dump(mode="json"), "peak_mb": peak}))


def solve_in_child(
    tasks: int, limit: float, source: str | None = None, wait: float | None = None
) -> dict[str, Any] | None:
    """The result (as JSON data) and the child's peak resident memory (MB); None after ``wait`` seconds.

    A release that cannot solve the workflow within ``wait`` is stopped (its child only).
    """
    context = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[str] = context.Queue()
    child = context.Process(target=_solve, args=(queue, tasks, limit, source))
    child.start()
    try:
        found: dict[str, Any] = json.loads(queue.get(timeout=wait))
    except queues.Empty:
        child.kill()
        child.join()
        return None
    child.join()
    return found
