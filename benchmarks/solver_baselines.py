"""Baselines the reference solver is measured against, in the same session, and benchmark instances.

- ``peakopt``: the reference solver itself, its every schedule oracle-checked.
- ``textbook``: the plain CP-SAT model (interval + cumulative + precedence + makespan).
- ``pyjobshop``: PyJobShop's CP-SAT backend (the ``bench`` extra).
- agent-sized workflows (2–15 tool calls, 0.01 s data) and a large generated workflow.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model
from paths import J30, j30_optima
from solver_helpers import assert_safe

from peakopt.instances import load
from peakopt.models import Machine, Task, Workflow
from peakopt.solver import solve
from peakopt.solver.cpsat import CpsatOptions

#: The j30 instances the textbook model finds hardest (measured: over 1 s, or unproven in 20 s).
J30_HARD = [
    "j3013_1",
    "j3013_2",
    "j3013_3",
    "j3013_5",
    "j3013_6",
    "j3013_7",
    "j3013_8",
    "j3029_3",
    "j3029_4",
    "j3029_6",
    "j3029_8",
    "j3029_9",
    "j3045_2",
    "j3045_6",
]


@dataclass(frozen=True)
class Run:
    """What a solver reached on one instance."""

    status: str
    makespan: float | None
    bound: float | None
    seconds: float


def j30_names() -> list[str]:
    """Instances to run: all 480, or ``PEAKOPT_J30=hard`` / a comma-separated list."""
    chosen = os.environ.get("PEAKOPT_J30", "all")
    if chosen == "all":
        return sorted(j30_optima())
    if chosen == "hard":
        return J30_HARD
    return chosen.split(",")


def j30_instance(name: str) -> tuple[Workflow, Machine]:
    suite = load(J30 / f"{name}.sm")
    return suite.workflows[0], suite.machines[0]


def peakopt(
    workflow: Workflow, machine: Machine, time_limit: float, workers: int, options: CpsatOptions | None = None
) -> Run:
    """peakopt's ``solve``, its schedule checked by the oracle before the run is counted."""
    result = solve(workflow, machine, time_limit=time_limit, workers=workers, options=options)
    assert_safe(result, workflow, machine)
    return Run(result.status, result.makespan, result.lower_bound, result.seconds)


@dataclass(frozen=True)
class Textbook:
    """The plain CP-SAT model of an instance: start variables and the makespan, by task id."""

    model: cp_model.CpModel
    starts: dict[str, cp_model.IntVar]
    makespan: cp_model.IntVar


def textbook_model(workflow: Workflow, machine: Machine, horizon: int | None = None) -> Textbook:
    """Interval + cumulative + precedence + makespan, integer data (PSPLIB), ending by ``horizon``.

    Without a horizon, the sum of the lengths (every schedule without idle time fits).
    """
    model = cp_model.CpModel()
    horizon = int(sum(t.length for t in workflow.tasks)) if horizon is None else horizon
    starts, ends, intervals = {}, {}, {}
    for task in workflow.tasks:
        starts[task.id] = model.new_int_var(0, horizon, f"s{task.id}")
        ends[task.id] = model.new_int_var(0, horizon, f"e{task.id}")
        intervals[task.id] = model.new_interval_var(starts[task.id], int(task.length), ends[task.id], task.id)
    for resource, capacity in machine.capacity.items():
        users = [(intervals[t.id], int(min(t.peak(resource), capacity))) for t in workflow.tasks]
        users = [(iv, d) for iv, d in users if d > 0]
        model.add_cumulative([iv for iv, _ in users], [d for _, d in users], int(capacity))
    for pred, succ in workflow.edges:
        model.add(starts[succ] >= ends[pred])
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, list(ends.values()))
    return Textbook(model, starts, makespan)


def textbook(workflow: Workflow, machine: Machine, time_limit: float, workers: int) -> Run:
    """The plain CP-SAT model, integer data (PSPLIB), built and solved."""
    began = time.perf_counter()
    plain = textbook_model(workflow, machine)
    plain.model.minimize(plain.makespan)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.max_time_in_seconds = time_limit
    status = solver.solve(plain.model)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return Run(
        solver.status_name(status).lower(),
        solver.objective_value if found else None,
        solver.best_objective_bound if found else None,
        time.perf_counter() - began,
    )


def pyjobshop(workflow: Workflow, machine: Machine, time_limit: float, workers: int) -> Run:
    """PyJobShop's CP-SAT backend on the same instance (integer data)."""
    from pyjobshop import Model  # the bench extra

    began = time.perf_counter()
    model = Model()
    resources = {r: model.add_renewable(int(c), name=r) for r, c in machine.capacity.items()}
    tasks = {t.id: model.add_task(name=t.id) for t in workflow.tasks}
    for task in workflow.tasks:
        used = [(resources[r], int(min(task.peak(r), machine.capacity[r]))) for r in resources]
        model.add_mode(tasks[task.id], [r for r, _ in used], int(task.length), [d for _, d in used])
    for pred, succ in workflow.edges:
        model.add_end_before_start(tasks[pred], tasks[succ])
    result = model.solve("ortools", time_limit=time_limit, display=False, num_workers=workers)
    return Run(
        str(result.status.value).lower(), result.objective, result.lower_bound, time.perf_counter() - began
    )


def agent_workflows(count: int, seed: int) -> list[Workflow]:
    """Random tool-call workflows of 2–15 steps with realistic costs (0.01 s, 0.1 core, 1 MB steps).

    A layered DAG (each step depends on 0–2 earlier ones); durations 0.05–8 s,
    CPU 0.1–4 cores, memory 64 MB–12 GB; one step in five has a
    checkpoint-load spike (a short high-memory phase, then a steady one).
    """
    rng = np.random.default_rng(seed)
    flows = []
    for k in range(count):
        size = int(rng.integers(2, 16))
        tasks = []
        for i in range(size):
            preds = sorted(
                {f"s{int(j)}" for j in rng.integers(0, i, size=int(rng.integers(0, 3)))} if i else set()
            )
            cpu = round(float(rng.uniform(0.1, 4)), 1)
            memory = float(int(rng.uniform(64, 12288)))
            duration = round(float(rng.uniform(0.05, 8)), 2)
            if rng.random() < 0.2:
                spike = round(float(rng.uniform(0.1, 2)), 2)
                profile = [
                    {"duration": spike, "demand": {"cpu": cpu, "memory_mb": min(16384.0, memory * 2)}},
                    {"duration": duration, "demand": {"cpu": cpu, "memory_mb": memory}},
                ]
                tasks.append(Task(id=f"s{i}", depends_on=tuple(preds), profile=profile))
            else:
                tasks.append(
                    Task(
                        id=f"s{i}",
                        depends_on=tuple(preds),
                        duration=duration,
                        demand={"cpu": cpu, "memory_mb": memory},
                    )
                )
        flows.append(Workflow(id=f"agent{k}", tasks=tuple(tasks)))
    return flows


AGENT_MACHINES = (
    Machine(name="small", capacity={"cpu": 2, "memory_mb": 8192}),
    Machine(name="medium", capacity={"cpu": 4, "memory_mb": 16384}),
    Machine(name="large", capacity={"cpu": 8, "memory_mb": 32768}),
)


def large_workflow(tasks: int = 1000, seed: int = 0) -> tuple[Workflow, Machine]:
    """A generated workflow with four resources: layered DAG, 0.01 s durations, integer-ish demands."""
    rng = np.random.default_rng(seed)
    names = ("cpu", "memory_mb", "gpu_mb", "net")
    capacity = {"cpu": 16.0, "memory_mb": 65536.0, "gpu_mb": 24576.0, "net": 8.0}
    built = []
    for i in range(tasks):
        window = range(max(0, i - 60), i)
        preds = (
            {
                f"t{int(j)}"
                for j in rng.choice(window, size=min(len(window), int(rng.integers(0, 3))), replace=False)
            }
            if i
            else set()
        )
        demand = {
            "cpu": round(float(rng.uniform(0.5, 6)), 1),
            "memory_mb": float(int(rng.uniform(256, 24576))),
            "gpu_mb": float(int(rng.uniform(0, 12288))) if rng.random() < 0.3 else 0.0,
            "net": float(int(rng.integers(0, 3))),
        }
        built.append(
            Task(
                id=f"t{i}",
                depends_on=tuple(sorted(preds)),
                duration=round(float(rng.uniform(0.1, 20)), 2),
                demand={r: demand[r] for r in names if demand[r] > 0},
            )
        )
    return Workflow(id=f"large{tasks}", tasks=tuple(built)), Machine(name="big", capacity=capacity)
