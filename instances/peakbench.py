"""PeakBench's resource-aware scheduling context (RASC).

A context describes one workflow on one machine, as the paper's template
(Appendix E) writes it::

    {"workflow_id": "refund",                                  (optional)
     "steps": {"lookup_order": "orders.get_order(order_id)", ...},
     "dependency_structure": {"decide": ["lookup_order", ...], ...},
     "machine": {"cpu_capacity": "4", "memory_mb_capacity": 8192},
     "resource_costs": {"steps": {"lookup_order": {"duration_s": "0.3",
         "cpu_avg_cores": 0.1, "cpu_peak_cores": 0.2, "memory_mb": 256}}},
     "task": "...", "scheduling_objective": "...", ...}

``steps`` maps each step id to its tool call (kept as the task's ``tool``),
or is a list of ids or of step objects (id under ``id``, ``step_id`` or
``name``; ``tool``, ``server``). ``dependency_structure`` maps a step to its
predecessors, or lists ``[from, to]`` edges; a step it names must be one of
the steps. Numbers may be quoted (``"4"``); anything else where a number
belongs is an error naming the field. The machine needs ``cpu_capacity``
and ``memory_mb_capacity``; without a ``name`` it is named after its
capacities (``rasc-cpu4-memory_mb8192``), so contexts on the same machine
share it. Resources other than CPU and memory travel in ``other_demand`` /
``other_capacity``. The ``cpu`` demand is ``cpu_peak_cores`` (conservative)
or, with ``cpu="avg"``, ``cpu_avg_cores``; both are kept in the task's
``meta``. The template's descriptive blocks (:data:`DESCRIPTIVE`) are
ignored; any other top-level key is refused, and a key in a machine, a step
or its costs that looks like a misspelt field (``memory`` for
``memory_mb``) too, since reading past it would drop what it says.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from peakopt.instances.errors import InputError, from_validation
from peakopt.instances.names import CPU_CHOICES
from peakopt.models import Machine, Suite, Task, Workflow

CPU, MEMORY = "cpu", "memory_mb"

#: The blocks of a context that peakopt reads.
USED = ("workflow_id", "id", "steps", "dependency_structure", "machine", "resource_costs")
#: The template's descriptive blocks: accepted and ignored.
DESCRIPTIVE = (
    "task",
    "earliest_depth",
    "scheduling_objective",
    "relative_to_case",
    "relative_to_machine",
    "classes",
    "required_output",
)
_MACHINE_KEYS = ("name", "cpu_capacity", "memory_mb_capacity", "other_capacity")
_COST_KEYS = ("duration_s", "cpu_avg_cores", "cpu_peak_cores", "memory_mb", "other_demand")
_STEP_KEYS = ("id", "step_id", "name", "tool", "server")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

Fail = Callable[[str, str], NoReturn]


def context_number(value: Any, where: str, fail: Fail) -> float | int:
    """A JSON number as given, or the number a quoted string spells; anything else fails."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return float(value)
    fail(where, f"must be a number, got {value!r}")


def _check_keys(data: dict[str, Any], known: Iterable[str], where: str, fail: Fail, *, strict: bool) -> None:
    """Refuse unknown keys (``strict``) or only those that look like a misspelt known one."""
    known = tuple(known)
    for key in data:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        if strict or close:
            fail(where, f"unknown key {key!r}{hint} (known: {', '.join(known)})")


def _steps(raw: Any, fail: Fail) -> list[tuple[str, dict[str, Any]]]:
    """(id, fields) of every step, from a mapping ``{id: tool call}`` or a list."""
    if isinstance(raw, dict) and raw:
        found = []
        for key, value in raw.items():
            if isinstance(value, str):
                found.append((str(key), {"tool": value}))
            elif isinstance(value, dict) or value is None:
                found.append((str(key), dict(value or {})))
            else:
                fail(f"steps {key!r}", f"must be a tool call (text) or a step object, got {value!r}")
        return found
    if not isinstance(raw, list) or not raw:
        fail("steps", "must be a non-empty mapping {step id: tool call} or a list of steps")
    found = []
    for position, step in enumerate(raw, start=1):
        if isinstance(step, dict):
            key = next((k for k in ("id", "step_id", "name") if step.get(k) not in (None, "")), None)
            if key is None:
                fail(f"steps #{position}", "has no id (give 'id', 'step_id' or 'name')")
            found.append((str(step[key]), step))
        elif isinstance(step, str | int) and not isinstance(step, bool):
            found.append((str(step), {}))
        else:
            fail(f"steps #{position}", f"must be a step id or a step object, got {step!r}")
    return found


def _predecessors(structure: Any, ids: list[str], fail: Fail) -> dict[str, list[str]]:
    """Each step's predecessors; a step the structure names must be one of ``ids``."""
    preds: dict[str, list[str]] = {i: [] for i in ids}

    def known(step: Any, where: str, role: str) -> str:
        if not isinstance(step, str | int) or isinstance(step, bool) or str(step) not in preds:
            fail(where, f"names unknown step {step!r} as a {role}; the steps are {_listing(ids)}")
        return str(step)

    if isinstance(structure, dict):
        for step, before in structure.items():
            where = f"dependency_structure {step!r}"
            after = known(step, where, "successor")
            listed = [before] if isinstance(before, str | int) else [] if before is None else before
            if not isinstance(listed, list):
                fail(where, f"must list predecessor ids, got {before!r}")
            for pred in listed:
                pred_id = known(pred, where, "predecessor")
                if pred_id not in preds[after]:  # a repeated edge says nothing new
                    preds[after].append(pred_id)
    elif isinstance(structure, list):
        for edge in structure:
            pair = [edge.get("from"), edge.get("to")] if isinstance(edge, dict) else edge
            if not isinstance(pair, list) or len(pair) != 2:
                fail("dependency_structure", f"edge {edge!r} is not [from, to]")
            where = f"dependency_structure edge {pair!r}"
            before, after = known(pair[0], where, "predecessor"), known(pair[1], where, "successor")
            if before not in preds[after]:
                preds[after].append(before)
    elif structure is not None:
        fail("dependency_structure", "must map steps to predecessor lists or list [from, to] edges")
    return preds


def _listing(ids: list[str], shown: int = 8) -> str:
    """The step ids, the first few of a long list."""
    more = f", ... ({len(ids)} steps)" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def _others(raw: Any, where: str, fail: Fail) -> dict[str, float | int]:
    """``other_demand`` / ``other_capacity``: resource name -> amount, CPU and memory excluded."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        fail(where, f"must map resource names to amounts, got {raw!r}")
    found = {}
    for resource, amount in raw.items():
        if resource in (CPU, MEMORY):
            fail(
                f"{where} {resource!r}", "cpu and memory_mb have their own fields; name other resources here"
            )
        found[str(resource)] = context_number(amount, f"{where} {resource!r}", fail)
    return found


def from_context(data: dict[str, Any], source: str | Path, *, cpu: str = "peak", prefix: str = "") -> Suite:
    """Read a RASC document as a suite of one workflow and one machine.

    Raises
    ------
    InputError
        On a missing or malformed block, an unknown step, a step without
        costs, a missing capacity, a non-numeric figure or a model rule broken.
    """
    if cpu not in CPU_CHOICES:
        raise ValueError(f"cpu must be one of {CPU_CHOICES}, got {cpu!r}")

    def fail(item: str, rule: str) -> NoReturn:
        raise InputError(source, " ".join(p for p in (prefix, item) if p), rule)

    _check_keys(data, USED + DESCRIPTIVE, "context", fail, strict=True)
    steps = _steps(data.get("steps"), fail)
    ids = [step_id for step_id, _ in steps]
    costs = data.get("resource_costs")
    step_costs = costs.get("steps") if isinstance(costs, dict) else None
    if not isinstance(step_costs, dict):
        fail("resource_costs", "needs a 'steps' object with each step's costs")
    for step_id in step_costs:
        if step_id not in ids:
            fail("resource_costs.steps", f"gives costs for unknown step {step_id!r}")
    preds = _predecessors(data.get("dependency_structure"), ids, fail)
    tasks = []
    for step_id, fields in steps:
        _check_keys(fields, _STEP_KEYS, f"steps {step_id!r}", fail, strict=False)
        cost = step_costs.get(step_id)
        if cost is None:
            fail(f"step {step_id!r}", "has no entry in resource_costs.steps")
        if not isinstance(cost, dict):
            fail(f"resource_costs.steps {step_id!r}", f"must be an object of the step's costs, got {cost!r}")
        tasks.append(_task(step_id, fields, cost, preds[step_id], cpu, fail))
    machine_raw = _machine(data.get("machine"), fail)
    raw = {"id": str(data.get("workflow_id") or data.get("id") or Path(str(source)).stem), "tasks": tasks}
    try:
        workflow = Workflow.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(source, exc, raw, prefix) from None
    try:
        machine = Machine.model_validate(machine_raw)
    except ValidationError as exc:
        raise from_validation(source, exc, machine_raw, f"{prefix} machine".strip()) from None
    return Suite(machines=(machine,), workflows=(workflow,))


def _task(
    step_id: str, fields: dict[str, Any], cost: dict[str, Any], preds: list[str], cpu: str, fail: Fail
) -> dict[str, Any]:
    where = f"resource_costs.steps {step_id!r}"
    _check_keys(cost, _COST_KEYS, where, fail, strict=False)

    def figure(key: str) -> float | int | None:
        value = cost.get(key)
        return None if value is None else context_number(value, f"{where} {key}", fail)

    duration = figure("duration_s")
    if duration is None:
        fail(where, "missing 'duration_s'")
    peak, avg = figure("cpu_peak_cores"), figure("cpu_avg_cores")
    peak = peak if peak is not None else avg if avg is not None else 0.0
    avg = avg if avg is not None else peak
    demand = {CPU: peak if cpu == "peak" else avg, MEMORY: figure("memory_mb") or 0.0}
    demand.update(_others(cost.get("other_demand"), f"{where} other_demand", fail))
    return {
        "id": step_id,
        "tool": fields.get("tool"),
        "server": fields.get("server"),
        "depends_on": preds,
        "duration": duration,
        "demand": demand,
        "meta": {"cpu_avg_cores": avg, "cpu_peak_cores": peak},
    }


def _machine(data: Any, fail: Fail) -> dict[str, Any]:
    if not isinstance(data, dict):
        fail("machine", "must be an object with cpu_capacity and memory_mb_capacity")
    _check_keys(data, _MACHINE_KEYS, "machine", fail, strict=False)
    capacity: dict[str, float | int] = {}
    for field, resource in (("cpu_capacity", CPU), ("memory_mb_capacity", MEMORY)):
        if data.get(field) is None:
            fail("machine", f"missing {field!r} (the machine's {resource} capacity)")
        capacity[resource] = context_number(data[field], f"machine {field}", fail)
    capacity.update(_others(data.get("other_capacity"), "machine other_capacity", fail))
    name = data.get("name")
    if name in (None, ""):
        # named by what it is, so that contexts on the same machine share it
        name = "rasc-" + "-".join(f"{r}{v:g}" for r, v in capacity.items())
    return {"name": str(name), "capacity": capacity}


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
