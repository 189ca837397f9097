"""Plug-ins and suites for the stress, store, executor and report tests.

The plug-ins are imported by worker processes (local or Dask) by name, so
they live in a module on the tests' path (``pythonpath = ["tests"]``).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from peakopt.instances import SuiteSpec, generate_suite
from peakopt.instances.native import dump
from peakopt.models import Machine, Workflow

TESTS = Path(__file__).resolve().parent


def in_order(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
    """Tasks back to back in input order (the inputs below list predecessors first)."""
    starts, now = {}, 0.0
    for task in workflow.tasks:
        starts[task.id] = now
        now += task.length
    return starts


def slow(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
    """``in_order`` after a pause: slow enough for a run to be killed midway."""
    time.sleep(0.03)
    return in_order(workflow, machine)


def crawl(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
    """``in_order`` after a longer pause: a run long enough to be disturbed midway."""
    time.sleep(0.1)
    return in_order(workflow, machine)


def raises(workflow: Workflow, machine: Machine | None) -> Any:
    raise RuntimeError("plug-in bug")


def garbage(workflow: Workflow, machine: Machine | None) -> Any:
    return "not a schedule"


def sleeps(workflow: Workflow, machine: Machine | None) -> Any:
    time.sleep(600)


def spins(workflow: Workflow, machine: Machine | None) -> Any:
    while True:
        pass


def deaf(workflow: Workflow, machine: Machine | None) -> Any:
    """Hangs and blocks the soft limit's signal: only the hard limit stops it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(600)


def crashes(workflow: Workflow, machine: Machine | None) -> Any:
    os._exit(7)


def small_suite(path: Path, workflows: int = 12, seed: int = 3) -> Path:
    """A generated suite (easy and medium tiers, three machines) written to ``path``."""
    easy = workflows - workflows // 3
    suite = generate_suite(SuiteSpec(seed=seed, counts={"easy": easy, "medium": workflows - easy}))
    path.write_text(json.dumps(dump(suite)))
    return path


def env() -> dict[str, str]:
    """The environment for a subprocess that must import this module."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}


def table(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of a query on a store, read-only."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute(sql).fetchall()
