"""Worst cases as files that reproduce them: one suite (the workflow and its machine) per case."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peakopt.campaign.store import Store
from peakopt.instances import write_atomic
from peakopt.instances.native import dump, pretty_json
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.oracle import ScoreRow


@dataclass(frozen=True)
class Case:
    """A workflow × machine on which a method is far from the optimum."""

    method: str
    workflow: Workflow
    machine: Machine
    row: ScoreRow
    reference: SolveResult | None
    seed: int = 0


def slug(text: str) -> str:
    """A file-name-safe form of a method or workflow name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "method"


def case_document(case: Case) -> dict[str, Any]:
    """A suite document of the case; ``meta.stress`` records the figures it reproduces."""
    row, ref = case.row, case.reference
    meta = {
        "method": case.method,
        "seed": case.seed,
        "makespan": row.makespan,
        "gap": row.gap,
        "gap_vs_lb": row.gap_vs_lb,
        "reference_status": None if ref is None else ref.status,
        "reference_makespan": None if ref is None else ref.makespan,
        "reference_lower_bound": None if ref is None else ref.lower_bound,
        "reproduce": f"peakopt solve FILE; peakopt schedule FILE --method {case.method} --seed {case.seed}",
    }
    return {"machines": [dump(case.machine)], "workflows": [dump(case.workflow)], "meta": {"stress": meta}}


def write_cases(cases: Sequence[Case], directory: str | Path) -> list[Path]:
    """Write each case to ``directory/<method>/<rank>-<workflow>-<machine>.json`` (atomically).

    Ranks count from 1 per method, in the order given.
    """
    written: list[Path] = []
    ranks: dict[str, int] = {}
    for case in cases:
        ranks[case.method] = ranks.get(case.method, 0) + 1
        folder = Path(directory) / slug(case.method)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{ranks[case.method]:02d}-{slug(case.workflow.id)}-{slug(case.machine.name)}.json"
        write_atomic(folder / name, pretty_json(case_document(case)))
        written.append(folder / name)
    return written


def worst_cases(store: Store, methods: Sequence[str], count: int, seed: int = 0) -> list[Case]:
    """The ``count`` rows of each method farthest from the optimum, with their instances."""
    return [
        Case(method, workflow, machine, row, reference, seed)
        for method in methods
        for row, workflow, machine, reference in store.worst(method, count)
    ]
