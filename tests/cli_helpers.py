"""Helpers of the command-line tests: running a command, reading what it printed."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from peakopt.cli.main import cli


def run(*args: str) -> tuple[int, str, str]:
    """``peakopt ARGS...`` in click's runner: exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def jsonl(text: str) -> list[dict[str, Any]]:
    """The records of a JSON Lines stream (``--json`` of a record stream), one per line."""
    return [json.loads(line) for line in text.splitlines()]
