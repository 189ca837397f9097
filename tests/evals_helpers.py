"""Shared pieces of the Inspect task tests: a small suite, canned answers, a log's figures, peakopt score."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from cli_helpers import jsonl
from click.testing import CliRunner
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)

from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.instances.native import write_atomic
from peakopt.models import Suite, Workflow

STEPS = ("lookup_order", "fraud_score", "history_scan", "policy_search", "decide")
ZERO = dict.fromkeys(STEPS, 0.0)
#: The refund workflow's optimum on its worker: fraud and history cannot overlap (memory), 8.6 s.
OPTIMAL = ZERO | {"history_scan": 4.8, "decide": 8.0}
#: Every step after the one before: valid and safe, 10.4 s.
SERIAL = {"lookup_order": 0.0, "fraud_score": 0.3, "history_scan": 5.1, "policy_search": 8.3, "decide": 9.8}
#: The four lookups at once: dependencies hold, memory overflows (unsafe).
UNSAFE = ZERO | {"decide": 4.8}
OPT = 8.6


def schedule_json(starts: dict[str, float]) -> str:
    """An answer in the prompt's format."""
    return json.dumps({"schedule": [{"step": s, "start": t} for s, t in starts.items()]})


#: Workflow id -> (reasoning or None, final answer text): what the canned model says to each sample.
ANSWERS: dict[str, tuple[str | None, str]] = {
    "optimal": (None, schedule_json(OPTIMAL)),
    "serial": (None, "Here is my plan:\n```json\n" + schedule_json(SERIAL) + "\n```"),
    "unsafe": (None, schedule_json(UNSAFE)),
    "garbage": (None, "I would rather not schedule anything today."),
    # the reasoning holds an unsafe schedule, the answer the optimum: the answer is scored
    "thinker": ("First idea: " + schedule_json(UNSAFE) + " no, memory overflows.", schedule_json(OPTIMAL)),
    # the schedule is only in the reasoning: nothing was answered, so nothing is scored
    "mute": ("The plan is " + schedule_json(OPTIMAL), "Done."),
}


def write_suite(path: Path, ids: tuple[str, ...] = tuple(ANSWERS)) -> Path:
    """A suite of copies of the refund workflow, one per id (tier: the first letter), on its worker."""
    refund = load("bundled:refund")
    base = refund.workflows[0]
    workflows = [
        Workflow.model_validate(base.model_dump() | {"id": name, "meta": {"tier": name[0]}}) for name in ids
    ]
    suite = Suite(machines=refund.machines, workflows=tuple(workflows))
    write_atomic(path, suite.model_dump_json(exclude_defaults=True))
    return path


def workflow_of(prompt: str) -> str:
    """The workflow a prompt is about (its context names it)."""
    found = re.search(r'"workflow_id": "([^"]+)"', prompt)
    assert found, prompt[:200]
    return found.group(1)


def run_cli(*args: str) -> tuple[int, str, str]:
    """``peakopt ARGS`` in process: exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def scored_rows(suite: Path, answers: Path, reference: Path) -> dict[str, dict[str, Any]]:
    """``peakopt score --json`` rows by workflow id."""
    code, out, err = run_cli("score", str(suite), "-s", str(answers), "--reference", str(reference), "--json")
    assert code == 0, err
    return {row["workflow"]: row for row in jsonl(out)}


def log_values(log: Any) -> dict[str, dict[str, float]]:
    """Each sample's score values in an Inspect log, by workflow id."""
    assert log.status == "success", log.error
    return {s.metadata["workflow"]: next(iter(s.scores.values())).value for s in log.samples}


def same(a: float | None, b: float | None) -> bool:
    """Equal, NaN and None counting as one 'no figure'."""
    a_none = a is None or (isinstance(a, float) and math.isnan(a))
    b_none = b is None or (isinstance(b, float) and math.isnan(b))
    return (a_none and b_none) or (not a_none and not b_none and math.isclose(a, b, abs_tol=1e-9))  # type: ignore[arg-type]


LOOKUPS = ("lookup_order", "fraud_score", "history_scan", "policy_search")
#: The refund workflow's true dependencies, as a planning answer gives them.
TRUE = {**{s: [] for s in LOOKUPS}, "decide": list(LOOKUPS)}


def canned(messages: list[ChatMessage], tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
    """The mockllm's answer to a prompt: ANSWERS of the prompt's workflow."""
    reasoning, text = ANSWERS[workflow_of(messages[-1].text)]
    content: list[ContentReasoning | ContentText] = [ContentText(text=text)]
    if reasoning is not None:
        content.insert(0, ContentReasoning(reasoning=reasoning))
    message = ChatMessageAssistant(content=content, model="mock")
    return ModelOutput(
        model="mock",
        choices=[ChatCompletionChoice(message=message, stop_reason="stop")],
        usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2),  # no token counting (offline)
    )
