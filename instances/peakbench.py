"""PeakBench's resource-aware scheduling context (RASC).

A context describes one workflow on one machine::

    {"workflow_id": "refund",                                  (optional)
     "steps": [{"id": "lookup_order", "tool": "...", "server": "..."}, ...],
     "dependency_structure": {"decide": ["lookup_order", ...], ...},
     "machine": {"name": "worker", "cpu_capacity": 4, "memory_mb_capacity": 8192},
     "resource_costs": {"steps": {"lookup_order": {"duration_s": 0.3,
         "cpu_avg_cores": 0.1, "cpu_peak_cores": 0.2, "memory_mb": 256}}}}

``steps`` may also be a list of plain ids; a step object may name its id
``id``, ``step_id`` or ``name``. ``dependency_structure`` maps a step to its
predecessors, or is a list of ``[from, to]`` edges. Keys peakopt does not use
are ignored (PeakBench contexts carry prompts and descriptions). The ``cpu``
demand is ``cpu_peak_cores`` (conservative) or, with ``cpu="avg"``,
``cpu_avg_cores``; both figures are kept in the task's ``meta``. Resources
other than CPU and memory travel in ``other_demand`` / ``other_capacity``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from peakopt.instances.errors import InputError, from_validation
from peakopt.models import Machine, Suite, Task, Workflow

CPU, MEMORY = "cpu", "memory_mb"
CPU_CHOICES = ("peak", "avg")


def _step_id(step: Any) -> Any:
    if isinstance(step, dict):
        for key in ("id", "step_id", "name"):
            if key in step:
                return step[key]
    return step


def _predecessors(
    structure: Any, ids: list[str], fail: Callable[[str, str], NoReturn]
) -> dict[str, list[str]]:
    preds: dict[str, list[str]] = {i: [] for i in ids}
    if isinstance(structure, dict):
        for step, before in structure.items():
            if not isinstance(before, list):
                fail(f"dependency_structure {step!r}", "must list predecessor ids")
            preds.setdefault(step, []).extend(str(b) for b in before)
    elif isinstance(structure, list):
        for edge in structure:
            pair = [edge.get("from"), edge.get("to")] if isinstance(edge, dict) else edge
            if not isinstance(pair, list) or len(pair) != 2:
                fail("dependency_structure", f"edge {edge!r} is not [from, to]")
            preds.setdefault(str(pair[1]), []).append(str(pair[0]))
    elif structure is not None:
        fail("dependency_structure", "must map steps to predecessor lists or list [from, to] edges")
    return preds


def from_context(data: dict[str, Any], source: str | Path, *, cpu: str = "peak", prefix: str = "") -> Suite:
    """Read a RASC document as a suite of one workflow and one machine.

    Raises
    ------
    InputError
        On a missing section, a step without costs, or a model rule broken.
    """
    if cpu not in CPU_CHOICES:
        raise ValueError(f"cpu must be one of {CPU_CHOICES}, got {cpu!r}")

    def fail(item: str, rule: str) -> NoReturn:
        raise InputError(source, " ".join(p for p in (prefix, item) if p), rule)

    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        fail("steps", "must be a non-empty list of steps")
    costs = data.get("resource_costs", {})
    step_costs = costs.get("steps") if isinstance(costs, dict) else None
    if not isinstance(step_costs, dict):
        fail("resource_costs", "needs a 'steps' object with each step's costs")
    ids = [str(_step_id(s)) for s in steps]
    preds = _predecessors(data.get("dependency_structure"), ids, fail)
    tasks = []
    for step, step_id in zip(steps, ids, strict=True):
        cost = step_costs.get(step_id)
        if not isinstance(cost, dict):
            fail(f"step {step_id!r}", "has no entry in resource_costs.steps")
        tasks.append(_task(step, step_id, cost, preds.get(step_id, []), cpu))
    machine_data = data.get("machine")
    if not isinstance(machine_data, dict):
        fail("machine", "must give cpu_capacity and memory_mb_capacity")
    raw = {
        "id": str(data.get("workflow_id") or data.get("id") or Path(str(source)).stem),
        "tasks": tasks,
    }
    machine_raw = _machine(machine_data)
    try:
        workflow = Workflow.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(source, exc, raw, prefix) from None
    try:
        machine = Machine.model_validate(machine_raw)
    except ValidationError as exc:
        raise from_validation(source, exc, machine_raw, f"{prefix} machine".strip()) from None
    return Suite(machines=(machine,), workflows=(workflow,))


def _task(step: Any, step_id: str, cost: dict[str, Any], preds: list[str], cpu: str) -> dict[str, Any]:
    extra = step if isinstance(step, dict) else {}
    peak = cost.get("cpu_peak_cores", cost.get("cpu_avg_cores", 0.0))
    avg = cost.get("cpu_avg_cores", peak)
    demand = {CPU: peak if cpu == "peak" else avg, MEMORY: cost.get("memory_mb", 0.0)}
    demand.update(cost.get("other_demand", {}))
    return {
        "id": step_id,
        "tool": extra.get("tool"),
        "server": extra.get("server"),
        "depends_on": preds,
        "duration": cost.get("duration_s"),
        "demand": demand,
        "meta": {"cpu_avg_cores": avg, "cpu_peak_cores": peak},
    }


def _machine(data: dict[str, Any]) -> dict[str, Any]:
    capacity = {CPU: data.get("cpu_capacity"), MEMORY: data.get("memory_mb_capacity")}
    capacity.update(data.get("other_capacity", {}))
    return {"name": str(data.get("name") or "rasc"), "capacity": capacity}


def to_context(workflow: Workflow, machine: Machine) -> dict[str, Any]:
    """The RASC document of ``workflow`` on ``machine``.

    A piecewise task is summarised as PeakBench does: its length, peak and
    time-averaged CPU, and peak memory.
    """
    steps, costs = [], {}
    for task in workflow.tasks:
        steps.append({k: v for k, v in (("id", task.id), ("tool", task.tool), ("server", task.server)) if v})
        costs[task.id] = _costs(task)
    other = {r: c for r, c in machine.capacity.items() if r not in (CPU, MEMORY)}
    machine_doc: dict[str, Any] = {
        "name": machine.name,
        "cpu_capacity": machine.capacity.get(CPU),
        "memory_mb_capacity": machine.capacity.get(MEMORY),
    }
    if other:
        machine_doc["other_capacity"] = other
    return {
        "workflow_id": workflow.id,
        "steps": steps,
        "dependency_structure": {t.id: list(t.depends_on) for t in workflow.tasks},
        "machine": {k: v for k, v in machine_doc.items() if v is not None},
        "resource_costs": {"steps": costs},
    }


def _costs(task: Task) -> dict[str, Any]:
    length = task.length
    peak = task.peak(CPU)
    mean = sum(s.duration * s.demand.get(CPU, 0.0) for s in task.segments) / length if length else peak
    cost: dict[str, Any] = {
        "duration_s": length,
        "cpu_avg_cores": task.meta.get("cpu_avg_cores", mean),
        "cpu_peak_cores": task.meta.get("cpu_peak_cores", peak),
        "memory_mb": task.peak(MEMORY),
    }
    other = {r: task.peak(r) for r in sorted(task.resources - {CPU, MEMORY})}
    if other:
        cost["other_demand"] = other
    return cost
