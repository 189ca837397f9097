"""Helpers of the command-line tests: running a command, reading what it printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
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


#: Runs the console script's entry point, then writes the imported modules' names to $PROBE_OUT.
PROBE = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps(sorted(sys.modules))))
from peakopt.cli.main import main
sys.argv = ["peakopt", *sys.argv[1:]]
main()
"""


def imported(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The modules a fresh ``peakopt ARGS`` imported, and its stdout."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "PROBE_OUT": str(out)},
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(out.read_text())), done.stdout
