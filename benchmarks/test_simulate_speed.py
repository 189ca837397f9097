"""Simulator throughput: runs per second of every execution policy on the bundled default suite.

Run with ``python -m pytest benchmarks/test_simulate_speed.py -s``: 20 sampled scenarios
(durations ±25 %, :func:`peakopt.oracle.uncertain.scenarios.draw`) per workflow × machine pair and policy,
plans from ``best:fast`` with their resource-flow edges for ``pos``. It prints runs/s per policy
(the figure of docs/execution.md) and checks, after the timed calls, a sample of the runs on
their realised workflows: dependency-valid (all but literal) and safe (order, pos, online).
"""

from __future__ import annotations

import time

import pytest

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Workflow
from peakopt.oracle import measure
from peakopt.oracle.judge.metrics import avoidable_cva, dependency_violations
from peakopt.oracle.uncertain.flows import resource_flow_edges
from peakopt.oracle.uncertain.scenarios import Noise, draw
from peakopt.oracle.uncertain.simulate import Simulation
from peakopt.solver.heuristics import run
from peakopt.solver.heuristics.online import policy_factory

ROUNDS = 20
POLICIES = [
    "literal",
    "enforced",
    "order",
    "pos",
    "online:admission",
    "online:sgs:parallel:lft",
    "online:best:fast",
]


def _simulation(workflow: Workflow, machine: Machine, plan: Schedule, policy: str) -> Simulation:
    if policy.startswith("online:"):
        return Simulation(workflow, machine, factory=policy_factory(policy.removeprefix("online:")))
    return Simulation(workflow, machine, policy, plan)  # type: ignore[arg-type]


@pytest.mark.slow
def test_simulator_runs_per_second() -> None:
    suite = load("bundled:default")
    pairs = [(w, m) for w in suite.workflows for m in suite.machines]
    plans = {}
    for w, m in pairs:
        plan = run(w, m, "best:fast")
        plans[w.id, m.name] = plan.model_copy(update={"edges": resource_flow_edges(w, m, plan.starts)})
    scenarios = {w.id: draw(w, ROUNDS, seed=0, noise=Noise(duration=0.25)) for w in suite.workflows}
    for policy in POLICIES:
        sims = [(_simulation(w, m, plans[w.id, m.name], policy), w, m) for w, m in pairs]
        began = time.perf_counter()
        results = [[sim.run(scenarios[w.id].lengths[k]) for k in range(ROUNDS)] for sim, w, _ in sims]
        seconds = time.perf_counter() - began
        print(f"{policy:28s} {len(pairs) * ROUNDS / seconds:10,.0f} runs/s")
        for (_, w, m), starts in list(zip(sims, results, strict=True))[::37]:
            realised = scenarios[w.id].workflow(0)
            measured = measure(realised, m, dict(zip(w.index, starts[0], strict=True)))
            if policy != "literal":
                assert dependency_violations(measured) == 0, (policy, w.id, m.name)
            if policy not in ("literal", "enforced"):
                assert avoidable_cva(measured) == pytest.approx(0.0, abs=1e-9), (policy, w.id, m.name)
