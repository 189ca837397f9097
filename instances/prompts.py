"""Prompts that ask an LLM to schedule a workflow on a machine.

One record per workflow × machine::

    {"workflow": "easy-000", "machine": "small", "setting": "rasc", "tier": "easy",
     "prompt": "...", "context": {...}, "output_schema": {...}}

Two settings, as in PeakBench:

- ``rasc``: the context is PeakBench's resource-aware scheduling context
  (:func:`peakopt.instances.to_context`): steps, dependencies, the machine's
  capacities and every step's duration, average and peak CPU and memory.
- ``no-profile``: the structure-only context: steps (with their tools and
  servers), dependencies and the machine's name; no capacities and no
  per-step costs, so the model must judge the tools' weight itself.

The model answers with JSON matching ``output_schema``: a start time in
seconds for every step, ``{"schedule": [{"step": "<id>", "start": 0.0}, ...]}``.
Answers come back as ``{"workflow", "machine", "source", "response"}``
records (``response`` holds the raw text), which ``peakopt score`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from peakopt.instances.peakbench import to_context
from peakopt.models import Machine, Suite, Workflow

SETTINGS = ("rasc", "no-profile")

_RULES = """Rules:
- A step may start only when every step it depends on has finished.
- Steps may run at the same time, but at every moment the steps running together must not use
  more of a resource than the machine has. A step that alone needs more than the machine has
  must run with no other step using that resource.
- Aim for the earliest finish of the whole workflow (the makespan) that keeps these rules."""

_INTRO = {
    "rasc": (
        "You schedule the tool calls (steps) of an LLM agent's workflow on one machine.\n"
        "The context below gives the steps, their dependencies (each step lists the steps it needs), "
        "the machine's capacities and each step's measured costs: duration_s (seconds), cpu_avg_cores, "
        "cpu_peak_cores (cores) and memory_mb (peak memory, MB). A step uses its peak CPU and its "
        "memory for its whole duration."
    ),
    "no-profile": (
        "You schedule the tool calls (steps) of an LLM agent's workflow on one machine.\n"
        "The context below gives the steps (with the tool and server each one calls) and their "
        "dependencies (each step lists the steps it needs). The steps' durations and resource use "
        "and the machine's capacities are not given: judge from the tools how long each call takes "
        "and how much CPU and memory it needs, and avoid overloading the machine."
    ),
}


def structure_context(workflow: Workflow, machine: Machine) -> dict[str, Any]:
    """The structure-only context: the RASC without capacities and per-step costs."""
    context = to_context(workflow, machine)
    del context["resource_costs"]
    context["machine"] = {"name": machine.name}
    return context


def output_schema(workflow: Workflow) -> dict[str, Any]:
    """JSON Schema of the answer: a start time (seconds, >= 0) for every step of ``workflow``."""
    return {
        "type": "object",
        "properties": {
            "schedule": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"type": "string", "enum": [t.id for t in workflow.tasks]},
                        "start": {"type": "number", "minimum": 0},
                    },
                    "required": ["step", "start"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["schedule"],
        "additionalProperties": False,
    }


def prompt_text(context: dict[str, Any], schema: dict[str, Any], setting: str) -> str:
    """The full prompt: task, rules, context JSON and the answer format."""
    example = {"schedule": [{"step": s["id"], "start": 0.0} for s in context["steps"][:2]]}
    return "\n\n".join(
        (
            _INTRO[setting],
            _RULES,
            "Context:\n" + json.dumps(context),
            "Answer with JSON only, no prose: give every step exactly once with its start time in "
            "seconds from 0, for example " + json.dumps(example) + ". The answer must match this "
            "JSON Schema:\n" + json.dumps(schema),
        )
    )


def prompt_record(workflow: Workflow, machine: Machine, setting: str = "rasc") -> dict[str, Any]:
    """The prompt record of ``workflow`` on ``machine`` in ``setting`` (see the module doc).

    Raises
    ------
    ValueError
        On an unknown setting.
    """
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    context = to_context(workflow, machine) if setting == "rasc" else structure_context(workflow, machine)
    schema = output_schema(workflow)
    record: dict[str, Any] = {"workflow": workflow.id, "machine": machine.name, "setting": setting}
    if "tier" in workflow.meta:
        record["tier"] = workflow.meta["tier"]
    record.update(prompt=prompt_text(context, schema, setting), context=context, output_schema=schema)
    return record


def prompt_records(
    suite: Suite, setting: str = "rasc", machines: Sequence[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Prompt records for every workflow × machine (or only the named machines).

    Raises
    ------
    KeyError
        On a machine name the suite does not have.
    """
    chosen = [suite.machine(name) for name in machines] if machines else list(suite.machines)
    for workflow in suite.workflows:
        for machine in chosen:
            yield prompt_record(workflow, machine, setting)
