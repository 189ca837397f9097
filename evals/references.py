"""The references a task's scorer compares with: solved once per suite and cached, or a given file.

The cache holds one JSON Lines file per suite, named by the suite's content hash
(:func:`peakopt.models.content_hash`: another suite under the same name is
another file), under ``$PEAKOPT_CACHE/references/`` or, without that variable,
``$XDG_CACHE_HOME/peakopt/references/`` (``~/.cache/peakopt/references/``). A
run solves only the pairs the file does not hold yet, through the campaign's one
reference runner (:data:`peakopt.campaign.solves.SOLVES`); the records are
streamed to ``HASH.jsonl.partial`` and moved over ``HASH.jsonl`` in one step
(:class:`~peakopt.campaign.jsonl.JsonLinesReferences`), so an interrupted run
keeps what it solved and never leaves a torn cache. Two runs that share a cache
solve one after the other (a lock file), not over each other's records.

Either way, every reference is checked against the pair it is used for before
use, as ``peakopt score --reference`` checks it
(:func:`peakopt.oracle.check_references`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peakopt.campaign.executors import Where, default_jobs, open_executor
from peakopt.campaign.jsonl import JsonLinesReferences
from peakopt.campaign.runner import run_work
from peakopt.campaign.solves import SOLVES, solve_items
from peakopt.evals.arguments import TaskError
from peakopt.instances import locks
from peakopt.instances.errors import OutputError
from peakopt.instances.records import reference_lines
from peakopt.models import Machine, Suite, Workflow, content_hash
from peakopt.oracle.judge.references import Checked, check_references

logger = logging.getLogger(__name__)

#: What a task's user can do about a cache file that is not a reference file.
REMEDY = "delete it to solve the references again, or give -T reference=REFS.jsonl"

#: How the references are solved: one CP-SAT thread per solve (reproducible), the pairs in parallel.
SOLVE_SETTINGS: dict[str, Any] = {"workers": 1, "seed": 0, "backend": "cpsat", "gap_limit": 0.0}


def cache_dir() -> Path:
    """Where the cached references live (see the module doc)."""
    root = os.environ.get("PEAKOPT_CACHE")
    if root:
        return Path(root) / "references"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "peakopt" / "references"


@dataclass(frozen=True)
class CacheFile:
    """The cache file as :class:`~peakopt.campaign.jsonl.JsonLinesReferences` writes it."""

    target: Path

    @property
    def path(self) -> str:
        """The path, for the messages."""
        return str(self.target)

    @property
    def option(self) -> str:
        """What names the file in the messages."""
        return "the references cache"

    @property
    def special(self) -> bool:
        """Never a device."""
        return False

    @property
    def partial(self) -> Path:
        """The side file the records are streamed to."""
        return self.target.with_name(self.target.name + ".partial")


def cached_references(suite: Suite, pairs: Iterable[tuple[Workflow, Machine]], time_limit: float) -> Path:
    """The cache file of ``suite``, holding a reference for every one of ``pairs``.

    Pairs without one (or with a failed solve) are solved now, in local processes.

    Parameters
    ----------
    suite
        Names the cache file by its content hash.
    pairs
        The workflow × machine pairs that need a reference.
    time_limit
        Seconds per solve; a solve that ends unproven keeps its bounds.

    Returns
    -------
    Path
        The cache file (it exists, possibly empty when ``pairs`` is).

    Raises
    ------
    peakopt.evals.arguments.TaskError
        When the cache file is not a reference file (it is left as it is), saying what to do.
    """
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{content_hash(suite)}.jsonl"
    with locks.held(target.with_name(target.name + ".lock")):
        try:
            store = JsonLinesReferences(CacheFile(target), resume=True, warn=logger.warning, remedy=REMEDY)
        except OutputError as exc:
            raise TaskError(str(exc)) from None
        try:
            todo = [
                item
                for item in solve_items(pairs, {**SOLVE_SETTINGS, "time_limit": time_limit})
                if (found := store.get(item.workflow, item.machine)) is None or found.status == "error"
            ]
            if todo:
                logger.info("solving %d references into %s", len(todo), target)
                with open_executor(Where(jobs=default_jobs()).at_most(len(todo))) as executor:
                    for _ in run_work(
                        executor,
                        SOLVES,
                        todo,
                        lambda item, result: store.add(item.workflow, item.machine, result),
                    ):
                        pass
        except BaseException:
            store.close()  # what was solved stays in the side file, for the next run
            raise
        store.finish()
    return target


def checked_references(path: str | Path, pairs: Iterable[tuple[Workflow, Machine]]) -> Checked:
    """The references of a file by (workflow, machine), each checked against its pair first.

    Raises
    ------
    peakopt.instances.InputError
        When a line is not a reference result, or the file is missing or empty.
    peakopt.oracle.InvalidReference
        When a reference contradicts itself or its pair.
    """
    return check_references(path, reference_lines(path), pairs)
