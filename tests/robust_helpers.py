"""Helpers of the robust-reference tests: realisations and a partial-order schedule's starts."""

from __future__ import annotations

import random
from fractions import Fraction

from peakopt.models import Segment, SolveResult, Workflow


def decimal(x: float) -> Fraction:
    return Fraction(repr(x))


def realise(workflow: Workflow, rng: random.Random) -> Workflow:
    """The workflow with every segment's duration times a random factor in [0, 3] (demands fixed)."""

    def stretched(segment: Segment) -> Segment:
        factor = rng.choice((0, rng.randint(0, 300) / 100, rng.randint(90, 110) / 100))
        return segment.model_copy(update={"duration": round(segment.duration * factor, 6)})

    tasks = []
    for task in workflow.tasks:
        profile = tuple(stretched(s) for s in task.segments)
        tasks.append(task.model_copy(update={"profile": profile, "duration": None, "demand": None}))
    return workflow.model_copy(update={"tasks": tuple(tasks)})


def longest_path_starts(workflow: Workflow, result: SolveResult) -> dict[str, float]:
    """The partial-order schedule started as soon as its edges allow: longest paths, in exact decimals."""
    preds: dict[str, list[str]] = {t.id: list(t.depends_on) for t in workflow.tasks}
    for a, b in result.edges:
        preds[b].append(a)
    length = {t.id: sum((decimal(s.duration) for s in t.segments), Fraction(0)) for t in workflow.tasks}
    starts: dict[str, Fraction] = {}
    while len(starts) < len(preds):
        for step, before in preds.items():
            if step not in starts and all(p in starts for p in before):
                starts[step] = max((starts[p] + length[p] for p in before), default=Fraction(0))
    return {step: float(start) for step, start in starts.items()}
