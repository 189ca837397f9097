"""Agent-sized workflows for the heuristics benchmarks: 2-15 steps, 0.01 s data, a small worker."""

from __future__ import annotations

import random

from peakopt.models import Machine, Segment, Task, Workflow

#: One agent worker: 4 cores, 8 GiB.
WORKER = Machine(name="worker", capacity={"cpu": 4, "memory_mb": 8192})

MEMORY = (256, 512, 1024, 3072, 4096, 6144, 9000)  # 9000 MB is over capacity on its own


def _demand(rng: random.Random) -> dict[str, float]:
    return {"cpu": round(rng.uniform(0.1, 3.0), 2), "memory_mb": float(rng.choice(MEMORY))}


def agent_workflow(size: int, rng: random.Random, name: str = "agent") -> Workflow:
    """A random DAG of ``size`` tool calls; about one in five has a spike-then-steady profile."""
    tasks = []
    for i in range(size):
        preds = tuple(f"t{j}" for j in range(i) if rng.random() < 0.25)
        if rng.random() < 0.2:
            profile = tuple(
                Segment(duration=round(rng.uniform(0.1, 3.0), 2), demand=_demand(rng)) for _ in range(2)
            )
            tasks.append(Task(id=f"t{i}", depends_on=preds, profile=profile))
        else:
            duration = round(rng.uniform(0.1, 5.0), 2)
            tasks.append(Task(id=f"t{i}", depends_on=preds, duration=duration, demand=_demand(rng)))
    return Workflow(id=name, tasks=tuple(tasks))


def agent_workflows(size: int, count: int, seed: int = 0) -> list[Workflow]:
    """``count`` workflows of ``size`` steps, the same for the same seed."""
    rng = random.Random(seed * 1000 + size)
    return [agent_workflow(size, rng, f"agent{size}_{n}") for n in range(count)]
