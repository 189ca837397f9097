"""Shared pieces of the ``peakopt score`` tests: the refund workflow's answers and its reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from peakopt.instances.records import reference_record, write_jsonl
from peakopt.models import SolveResult

#: Every step of the refund workflow at 0 (invalid: decide starts before its inputs end).
ZERO = dict.fromkeys(("lookup_order", "fraud_score", "history_scan", "policy_search", "decide"), 0.0)
#: Its optimum on the worker, 8.6 s: fraud and history cannot overlap (memory).
SAFE = ZERO | {"history_scan": 4.8, "decide": 8.0}
#: The four lookups at once, 5.4 s: dependencies hold, memory overflows.
ASAP = ZERO | {"decide": 4.8}


def answers(tmp_path: Path) -> Path:
    """A JSON Lines file of answers to refund: starts, responses, an unknown machine and workflow, junk."""
    path = tmp_path / "answers.jsonl"
    records: list[dict[str, Any]] = [
        {"workflow": "refund", "machine": "worker", "source": "asap", "starts": ASAP},
        {"workflow": "refund", "source": "serial", "starts": SAFE},
        {"workflow": "refund", "source": "llm", "response": f"```json\n{json.dumps(SAFE)}\n```", "id": "q1"},
        {"workflow": "refund", "source": "llm", "response": "Sorry, I can't do that.", "id": "q2"},
        {"workflow": "refund", "machine": "laptop", "source": "llm", "starts": SAFE},
        {"workflow": "nope", "source": "llm", "starts": SAFE},
    ]
    write_jsonl(path, records)
    with path.open("a") as out:
        out.write("not json at all\n")
    return path


def references(tmp_path: Path) -> Path:
    """A JSON Lines file of refund's optimal reference on the worker (:data:`SAFE`)."""
    path = tmp_path / "refs.jsonl"
    result = SolveResult(
        workflow="refund", machine="worker", status="optimal", makespan=8.6, lower_bound=8.6, starts=SAFE
    )
    write_jsonl(path, [reference_record(result)])
    return path
