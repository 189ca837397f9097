"""Simulator throughput: runs per second of every execution policy on the bundled default suite.

Run with ``python -m pytest benchmarks/test_simulate_speed.py -s``: one realisation (durations
±25 %) per workflow × machine pair and policy, 20 rounds, plans from ``best:fast``. It prints
runs/s per policy (the figure of docs/execution.md) and checks, after the timed calls, that
every order/pos/admission run is safe and every enforced run dependency-valid on its realised
workflow.
"""

from __future__ import annotations

import random
import time

import pytest

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Segment, Workflow
from peakopt.oracle import measure
from peakopt.oracle.metrics import avoidable_cva, dependency_violations
from peakopt.oracle.simulate import Simulation
from peakopt.solver.heuristics import run
from peakopt.solver.heuristics.online import policy_factory

ROUNDS = 20
POLICIES = ["literal", "enforced", "order", "pos", "online:admission", "online:sgs:parallel:lft", "online:best:fast"]


def _simulation(workflow: Workflow, machine: Machine, plan: Schedule, policy: str) -> Simulation:
    if policy.startswith("online:"):
        return Simulation(workflow, machine, factory=policy_factory(policy.removeprefix("online:")))
    return Simulation(workflow, machine, policy, plan)  # type: ignore[arg-type]


def _realised(workflow: Workflow, lengths: list[float]) -> Workflow:
    tasks = []
    for task, length in zip(workflow.tasks, lengths, strict=True):
        factor = length / task.length if task.length else 1.0
        profile = tuple(Segment(duration=s.duration * factor, demand=s.demand) for s in task.segments)
        tasks.append(task.model_copy(update={"profile": profile, "duration": None, "demand": None}))
    return workflow.model_copy(update={"tasks": tuple(tasks)})


@pytest.mark.slow
def test_simulator_runs_per_second() -> None:
    suite = load("bundled:default")
    pairs = [(w, m) for w in suite.workflows for m in suite.machines]
    plans = {(w.id, m.name): run(w, m, "best:fast") for w, m in pairs}
    rng = random.Random(0)
    lengths = {w.id: [[t.length * rng.uniform(0.75, 1.25) for t in w.tasks] for _ in range(ROUNDS)] for w in suite.workflows}
    for policy in POLICIES:
        sims = [(_simulation(w, m, plans[w.id, m.name], policy), w, m) for w, m in pairs]
        began = time.perf_counter()
        results = [[sim.run(lengths[w.id][k]) for k in range(ROUNDS)] for sim, w, _ in sims]
        seconds = time.perf_counter() - began
        print(f"{policy:28s} {len(pairs) * ROUNDS / seconds:10,.0f} runs/s")
        for (sim, w, m), starts in list(zip(sims, results, strict=True))[::37]:
            realised = _realised(w, lengths[w.id][0])
            measured = measure(realised, m, dict(zip(w.index, starts[0], strict=True)))
            if policy != "literal":
                assert dependency_violations(measured) == 0, (policy, w.id, m.name)
            if policy not in ("literal", "enforced"):
                assert avoidable_cva(measured) == pytest.approx(0.0, abs=1e-9), (policy, w.id, m.name)
