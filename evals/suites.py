"""What a task runs on: the suite of ``-T suite=...``, narrowed by machines and tiers, shuffled, limited.

The task parameters come from Inspect's ``-T name=value`` (values read as
YAML), so a list may arrive as a list (``-T machines=[small,large]``) or as
one comma-separated string (``-T machines=small,large``); both are accepted.
Nothing here imports ``inspect_ai``: the tasks turn the pairs into samples.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from peakopt.instances import load
from peakopt.models import Machine, Suite, Workflow

#: One workflow on one machine: what a scheduling sample asks about.
WorkflowMachine = tuple[Workflow, Machine]
T = TypeVar("T")


def load_suite(path: str) -> Suite:
    """The suite of ``path`` (a file or ``bundled:NAME``).

    The task builds its dataset from it and its scorer judges on it; each reads
    it (a few hundredths of a second for the default suite), so that a file
    changed between two runs in one process is never seen stale.

    Raises
    ------
    peakopt.instances.InputError
        When the file cannot be used.
    """
    return load(path)


def name_list(value: str | Sequence[str] | None) -> list[str] | None:
    """A task parameter that names things: None (all), ``"a,b"`` or ``["a", "b"]``."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    kept = [item.strip() for item in items if item.strip()]
    return kept or None


@dataclass(frozen=True)
class Selection:
    """Which part of a suite a task runs on, and in which order.

    Attributes
    ----------
    machines, tiers
        Only these machine names and workflow tiers (``meta["tier"]``); None for all.
    limit
        At most this many items (after shuffling); None for all.
    seed
        Shuffle the items with this seed first; None keeps the suite's order.
    """

    machines: list[str] | None = None
    tiers: list[str] | None = None
    limit: int | None = None
    seed: int | None = None

    def workflows(self, suite: Suite) -> list[Workflow]:
        """The suite's workflows of the chosen tiers, in the suite's order.

        Raises
        ------
        ValueError
            When a tier names no workflow of the suite (the message names ``-T tiers``).
        """
        if self.tiers is None:
            return list(suite.workflows)
        known = {str(w.meta.get("tier")) for w in suite.workflows if "tier" in w.meta}
        wrong = [t for t in self.tiers if t not in known]
        if wrong:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"-T tiers: no workflow of tier {', '.join(wrong)}; known: {listed}")
        return [w for w in suite.workflows if str(w.meta.get("tier")) in self.tiers]

    def chosen_machines(self, suite: Suite) -> list[Machine]:
        """The suite's machines of the chosen names (all of them by default).

        Raises
        ------
        ValueError
            When the suite has no machine at all, or none of a chosen name.
        """
        if not suite.machines:
            raise ValueError("-T suite: the suite has no machine profiles; scheduling needs them")
        if self.machines is None:
            return list(suite.machines)
        known = [m.name for m in suite.machines]
        wrong = [name for name in self.machines if name not in known]
        if wrong:
            raise ValueError(f"-T machines: no machine {', '.join(wrong)}; known: {', '.join(known)}")
        return [suite.machine(name) for name in self.machines]

    def order(self, items: Sequence[T]) -> list[T]:
        """``items`` shuffled with the seed (if any), then cut to the limit (if any).

        Raises
        ------
        ValueError
            On a negative limit.
        """
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"-T limit: must be at least 0, got {self.limit}")
        found = list(items)
        if self.seed is not None:
            random.Random(self.seed).shuffle(found)
        return found if self.limit is None else found[: self.limit]

    def candidates(self, suite: Suite) -> list[WorkflowMachine]:
        """Every chosen workflow × chosen machine, workflow by workflow (before :meth:`order`)."""
        machines = self.chosen_machines(suite)
        return [(w, m) for w in self.workflows(suite) for m in machines]

    def pairs(self, suite: Suite) -> list[WorkflowMachine]:
        """Every chosen workflow × chosen machine, workflow by workflow, shuffled and limited."""
        return self.order(self.candidates(suite))
