"""Prompts for an LLM: schedule a workflow on a machine, or plan its dependency structure.

**Scheduling** (``task: "schedule"``), one record per workflow × machine::

    {"workflow": "easy-000", "machine": "small", "task": "schedule", "setting": "rasc",
     "tier": "easy", "prompt": "...", "context": {...}, "output_schema": {...}}

The context is that of the setting (:mod:`peakopt.instances.contexts`):
``rasc`` (PeakBench's resource-aware scheduling context), ``durations``,
``cpu``, ``memory``, ``cpu-memory`` or ``no-profile`` (structure only). The
model answers with JSON matching ``output_schema``: a start time in seconds
for every step, ``{"schedule": [{"step": "<id>", "start": 0.0}, ...]}``.
Answers come back as ``{"workflow", "machine", "source", "setting",
"response"}`` records (``response`` holds the raw text; ``setting`` copied
from the prompt, so that scores can be grouped by it), which ``peakopt
score`` reads.

**Planning** (``task: "plan"``, PeakBench's Dimension I), one record per workflow::

    {"workflow": "easy-000", "task": "plan", "tier": "easy",
     "prompt": "...", "context": {...}, "output_schema": {...}}

The context gives the user's request and the steps with their tool calls,
not the dependencies: a call's argument ``$<step>.output`` is another step's
output, so the structure can be read from the calls alone. The model
answers ``{"dependencies": {"<step>": ["<step it needs>", ...], ...}}``;
answers come back as ``{"workflow", "source", "response"}`` records, which
``peakopt plan-score`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from peakopt.instances.contexts import context, setting_of, structure_context
from peakopt.instances.names import SETTINGS, TASKS
from peakopt.models import Machine, Suite, Workflow

__all__ = [
    "SETTINGS",
    "TASKS",
    "output_schema",
    "plan_context",
    "plan_output_schema",
    "plan_prompt_record",
    "plan_prompt_records",
    "plan_prompt_text",
    "prompt_record",
    "prompt_records",
    "prompt_text",
    "structure_context",
]

_RULES = """Rules:
- A step may start only when every step it depends on has finished.
- Steps may run at the same time, but at every moment the steps running together must not use
  more of a resource than the machine has. A step that alone needs more than the machine has
  must run with no other step using that resource.
- Aim for the earliest finish of the whole workflow (the makespan) that keeps these rules."""

_PLAN_INTRO = (
    "You plan the tool calls (steps) of an LLM agent's workflow.\n"
    "The context below gives the user's request and the steps, each with the tool call the agent "
    "makes. An argument written $<step>.output is the output of that step: the call needs it, so that "
    "step must finish first. Give the dependency structure: for every step, the steps that must "
    "finish before it can start; a step that needs none gets an empty list."
)


def _head(workflow: Workflow, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"workflow": workflow.id, **fields}
    if "tier" in workflow.meta:
        record["tier"] = workflow.meta["tier"]
    return record


def output_schema(workflow: Workflow) -> dict[str, Any]:
    """JSON Schema of a scheduling answer: a start time (seconds, >= 0) for every step of ``workflow``."""
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
    """The full scheduling prompt: task, rules, context JSON and the answer format."""
    example = {"schedule": [{"step": s["id"], "start": 0.0} for s in context["steps"][:2]]}
    return "\n\n".join(
        (
            setting_of(setting).intro,
            _RULES,
            "Context:\n" + json.dumps(context),
            "Answer with JSON only, no prose: give every step exactly once with its start time in "
            "seconds from 0, for example " + json.dumps(example) + ". The answer must match this "
            "JSON Schema:\n" + json.dumps(schema),
        )
    )


def prompt_record(workflow: Workflow, machine: Machine, setting: str = "rasc") -> dict[str, Any]:
    """The scheduling prompt record of ``workflow`` on ``machine`` in ``setting`` (see the module doc).

    Raises
    ------
    ValueError
        On an unknown setting.
    """
    found = context(workflow, machine, setting)
    schema = output_schema(workflow)
    record = _head(workflow, machine=machine.name, task="schedule", setting=setting)
    record.update(prompt=prompt_text(found, schema, setting), context=found, output_schema=schema)
    return record


def prompt_records(
    suite: Suite, setting: str = "rasc", machines: Sequence[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Scheduling prompt records for every workflow × machine (or only the named machines).

    Raises
    ------
    KeyError
        On a machine name the suite does not have.
    """
    chosen = [suite.machine(name) for name in machines] if machines else list(suite.machines)
    for workflow in suite.workflows:
        for machine in chosen:
            yield prompt_record(workflow, machine, setting)


def plan_context(workflow: Workflow) -> dict[str, Any]:
    """The planning context: the user's request and every step's id, tool, server and call.

    Raises
    ------
    ValueError
        Naming the first step without a call: its dependencies could not be read from the context.
    """
    steps = []
    for task in workflow.tasks:
        if not task.call:
            raise ValueError(
                f"step {task.id!r} has no tool call ('call'): a planning prompt shows the calls "
                "instead of the dependencies"
            )
        fields = (("id", task.id), ("tool", task.tool), ("server", task.server), ("call", task.call))
        steps.append({k: v for k, v in fields if v})
    found: dict[str, Any] = {"workflow_id": workflow.id}
    if workflow.request:
        found["request"] = workflow.request
    found["steps"] = steps
    return found


def plan_output_schema(workflow: Workflow) -> dict[str, Any]:
    """JSON Schema of a planning answer: every step of ``workflow`` with the steps it depends on."""
    ids = [t.id for t in workflow.tasks]
    needs = {"type": "array", "items": {"type": "string", "enum": ids}}
    return {
        "type": "object",
        "properties": {
            "dependencies": {
                "type": "object",
                "properties": dict.fromkeys(ids, needs),
                "required": ids,
                "additionalProperties": False,
            }
        },
        "required": ["dependencies"],
        "additionalProperties": False,
    }


def plan_prompt_text(context: dict[str, Any], schema: dict[str, Any]) -> str:
    """The full planning prompt: task, context JSON and the answer format."""
    example = {"dependencies": {"<step>": ["<step it needs>", "..."], "<another step>": []}}
    return "\n\n".join(
        (
            _PLAN_INTRO,
            "Context:\n" + json.dumps(context),
            "Answer with JSON only, no prose: give every step exactly once with the list of the steps "
            "it depends on, for example " + json.dumps(example) + ". The answer must match this JSON "
            "Schema:\n" + json.dumps(schema),
        )
    )


def plan_prompt_record(workflow: Workflow) -> dict[str, Any]:
    """The planning prompt record of ``workflow`` (see the module doc).

    Parameters
    ----------
    workflow
        A workflow whose every task has a ``call`` (generated suites do).

    Returns
    -------
    dict
        ``workflow``, ``task`` (``"plan"``), ``tier`` (when the workflow has
        one), ``prompt``, ``context`` and ``output_schema``.

    Raises
    ------
    ValueError
        Naming the first step without a call.
    """
    found = plan_context(workflow)
    schema = plan_output_schema(workflow)
    record = _head(workflow, task="plan")
    record.update(prompt=plan_prompt_text(found, schema), context=found, output_schema=schema)
    return record


def plan_prompt_records(suite: Suite) -> Iterator[dict[str, Any]]:
    """Planning prompt records for every workflow of ``suite`` (see :func:`plan_prompt_record`)."""
    for workflow in suite.workflows:
        yield plan_prompt_record(workflow)
