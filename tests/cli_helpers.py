"""Helpers of the command-line tests: reading what a command printed."""

from __future__ import annotations

import json
from typing import Any


def jsonl(text: str) -> list[dict[str, Any]]:
    """The records of a JSON Lines stream (``--json`` of a record stream), one per line."""
    return [json.loads(line) for line in text.splitlines()]
