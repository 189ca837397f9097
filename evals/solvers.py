"""Answers without a model: the oracle's own schedule, and the trivial baselines, as Inspect solvers.

``inspect eval peakopt/schedule --solver peakopt/oracle --model mockllm/model`` answers each
sample with its reference schedule (the one the scorer compares with), written as a model must
write it; the scorer then reads it back from the text like any answer. Every pair with a proven
optimum must score efficiency 1.000: the end-to-end self-check of prompt, parser, scorer and
references. ``--solver peakopt/trivial -S answer=asap`` (or ``zero``, ``serial``) answers with a
trivial schedule (:mod:`peakopt.campaign.floor`): the floor a model must beat. Neither calls the
model, so neither needs a network nor a tokenizer: an offline run from the command line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache

from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from peakopt.campaign.floor import TRIVIAL, trivial_starts
from peakopt.evals.arguments import TaskError, shown
from peakopt.evals.references import checked_references
from peakopt.evals.suites import load_suite
from peakopt.models import SolveResult, Suite

#: What a solver of this module names itself as in the answer (``ModelOutput.model``).
ORACLE_MODEL, TRIVIAL_MODEL = "peakopt/oracle", "peakopt/trivial"


def answer_text(starts: Mapping[str, float]) -> str:
    """``starts`` as a model answers them: ``{"schedule": [{"step": ..., "start": ...}, ...]}``."""
    return json.dumps({"schedule": [{"step": step, "start": start} for step, start in starts.items()]})


@cache
def _suite(path: str) -> Suite:
    return load_suite(path)


@cache
def _references(suite: str, path: str) -> Mapping[tuple[str, str | None], SolveResult]:
    loaded = _suite(suite)
    return checked_references(path, [(w, m) for w in loaded.workflows for m in loaded.machines])


def _answered(state: TaskState, model: str, starts: Mapping[str, float] | None, why: str) -> TaskState:
    text = answer_text(starts) if starts is not None else why
    state.output = ModelOutput.from_content(model=model, content=text)
    return state


@solver
def oracle() -> Solver:
    """Answer with the sample's reference schedule (proven optimal where the reference says so)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        found = _references(meta["suite"], meta["reference"]).get((meta["workflow"], meta["machine"]))
        starts = None if found is None else found.starts
        return _answered(state, ORACLE_MODEL, starts, "no reference schedule for this pair")

    return solve


@solver
def trivial(answer: str = "asap") -> Solver:
    """Answer with a trivial schedule: ``zero`` (every step at 0), ``serial`` or ``asap``.

    Raises
    ------
    TaskError
        For another ``answer`` (naming ``-S answer``).
    """
    if answer not in TRIVIAL:
        raise TaskError(f"-S answer={shown(answer)}: one of {', '.join(TRIVIAL)}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        suite = _suite(meta["suite"])
        starts = trivial_starts(suite.workflow(meta["workflow"]), suite.machine(meta["machine"]))
        return _answered(state, f"{TRIVIAL_MODEL}:{answer}", starts[answer], "")

    return solve
