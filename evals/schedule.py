"""``peakopt/schedule`` (PeakBench's Dimension II): a model schedules a workflow on a machine.

One sample per workflow × machine: the prompt of ``peakopt prompt``
(:func:`peakopt.instances.prompts.prompt_record`), the sample metadata
``workflow``, ``machine``, ``setting`` and ``tier``. With ``structured=true``
the answer's JSON Schema is sent as the response format. The scorer runs the
oracle on the final answer's raw text, exactly as ``peakopt score`` reads a
``response`` record: a reasoning model's reasoning (Inspect's
``ContentReasoning``) is not scored, only what it answered. It reports the
figures of :mod:`peakopt.evals.values` with their mean and standard error, and
keeps the oracle's whole row in each score's metadata (``peakopt report`` reads
it from the log).
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from peakopt.campaign.floor import hard_pairs
from peakopt.campaign.provenance import oracle_identity, peakopt_version, suite_identity
from peakopt.evals.answer import answer
from peakopt.evals.arguments import TaskError, check_arguments, chosen, listed_names, shown, suite_argument
from peakopt.evals.logs import ROW_KEY
from peakopt.evals.references import cached_references, checked_references
from peakopt.evals.suites import Selection, WorkflowMachine, load_suite
from peakopt.evals.values import SCHEDULE_KEYS, schedule_values
from peakopt.instances.prompts import prompt_record
from peakopt.models import PeakoptError, Suite
from peakopt.oracle.judge.references import Checked
from peakopt.oracle.tables.score_rows import score_record

logger = logging.getLogger(__name__)

#: The task's version: raised whenever a change makes its scores incomparable with earlier logs'
#: (the prompt, the samples, the scoring). Inspect records it in every log (``task_version``).
TASK_VERSION = 1

#: How the scores of a sample's epochs are combined (``inspect eval --epochs N``): their mean,
#: key by key, so a sample's efficiency is its mean over the epochs.
EPOCHS_REDUCER = "mean"


def sample_id(workflow: str, machine: str) -> str:
    """The id of the sample of ``workflow`` on ``machine``."""
    return f"{workflow}@{machine}"


def schedule_sample(pair: WorkflowMachine, setting: str, suite: str = "", reference: str = "") -> Sample:
    """The sample of one workflow × machine: its prompt, what identifies it, where its reference is.

    ``suite`` and ``reference`` (the task's arguments) let a solver without a model answer it
    (:mod:`peakopt.evals.solvers`).
    """
    workflow, machine = pair
    record = prompt_record(workflow, machine, setting)
    metadata = {
        "workflow": workflow.id,
        "machine": machine.name,
        "setting": setting,
        "tier": record.get("tier"),
        "output_schema": record["output_schema"],
        "suite": suite,
        "reference": reference,
    }
    return Sample(input=record["prompt"], id=sample_id(workflow.id, machine.name), metadata=metadata)


@scorer(metrics={key: [mean(), stderr()] for key in SCHEDULE_KEYS})
def oracle(suite: str, reference: str) -> Scorer:
    """Score the final answer's text with peakopt's oracle against the references.

    Parameters
    ----------
    suite
        The suite the samples come from (a path or ``bundled:NAME``).
    reference
        The references file: the task's cache file or the one it was given.
    """
    loaded = load_suite(suite)
    references = checked_references(reference, [(w, m) for w in loaded.workflows for m in loaded.machines])

    async def score(state: TaskState, target: Target) -> Score:
        if state.output.error:
            # the model never answered (a provider error): no verdict on it, rather than a 0
            why = f"no answer from the model: {state.output.error}"
            return Score.unscored(explanation=why, metadata={"error": state.output.error})
        record = {
            "id": str(state.sample_id),
            "workflow": state.metadata["workflow"],
            "machine": state.metadata["machine"],
            "setting": state.metadata["setting"],
            "source": str(state.model),
            "response": state.output.completion,
        }
        row = score_record(record, loaded, references)
        return Score(
            value=schedule_values(row),
            answer=state.output.completion,
            explanation="; ".join(row.reasons) or ("valid and safe" if row.safe else "valid, unsafe"),
            metadata={ROW_KEY: row.model_dump(mode="json")},
        )

    return score


def _reference_file(
    pairs: list[WorkflowMachine], suite: Suite, reference: str | None, time_limit: float
) -> str:
    """The references file the scorer reads: ``reference`` (checked now) or the suite's cache file.

    Raises
    ------
    TaskError
        When the given file cannot be used (naming ``-T reference``), or the cache is damaged.
    """
    if reference is None:
        path = str(cached_references(suite, pairs, time_limit))
        _say_failed(path, checked_references(path, pairs), len(pairs))
        return path
    try:
        known = checked_references(reference, pairs)
    except PeakoptError as exc:
        raise TaskError(f"-T reference={shown(reference)}: {exc}") from None
    missing = [p for p in pairs if (p[0].id, p[1].name) not in known]
    if missing:
        first = sample_id(missing[0][0].id, missing[0][1].name)
        logger.warning(
            "%s holds no reference for %d samples (e.g. %s): no gap there", reference, len(missing), first
        )
    _say_failed(reference, known, len(pairs))
    return reference


def _say_failed(path: str, known: Checked, pairs: int) -> None:
    """One warning when references failed (their samples get no gap or efficiency), before any sample runs."""
    failed = [(key, result) for key, result in known.items() if result.status == "error"]
    if failed:
        (workflow, machine), result = failed[0]
        why = ((result.message or "").strip().splitlines() or ["no message"])[0][:200]
        logger.warning(
            "%s: %d of %d references failed (e.g. %s: %s): no gap or efficiency for those samples",
            path,
            len(failed),
            pairs,
            sample_id(workflow, machine or ""),
            why,
        )


@task
def schedule(
    suite: str = "bundled:default",
    setting: str = "rasc",
    machines: str | list[str] | None = None,
    tiers: str | list[str] | None = None,
    limit: int | None = None,
    seed: int | None = None,
    structured: bool = False,
    reference: str | None = None,
    time_limit: float = 60.0,
    split: str = "all",
    **unknown: Any,
) -> Task:
    """Schedule each workflow × machine of a suite; scored by peakopt's oracle against the optimum.

    Every argument is checked first, with the command line's ranges
    (:mod:`peakopt.evals.arguments`); a wrong one, or one the task does not
    have, is one message naming it.

    Parameters
    ----------
    suite
        Workflows and machines: a file in any input format, or ``bundled:NAME``.
    setting
        The prompt's context: ``rasc`` (resource costs) or ``no-profile`` (structure only).
    machines, tiers
        Only these machines and workflow tiers (comma-separated or a list, each once).
    limit, seed
        At most ``limit`` samples, drawn after shuffling with ``seed`` (suite order without one).
    structured
        Send the answer's JSON Schema as the response format (structured output).
    reference
        References to compare with (``peakopt solve -o``); by default they are solved
        once per suite and cached (see :mod:`peakopt.evals.references`).
    time_limit
        Seconds per reference solve, when they are solved (as ``peakopt solve --time-limit``).
    split
        ``all`` pairs, or ``hard``: only those no trivial answer (every step at 0, one at a
        time, ASAP) solves optimally (:mod:`peakopt.campaign.floor`); chosen before ``limit``.
    """
    given: dict[str, Any] = {"suite": suite, "setting": setting, "machines": machines, "tiers": tiers}
    given |= {"limit": limit, "split": split}
    given |= {"seed": seed, "structured": structured, "reference": reference, "time_limit": time_limit}
    args = check_arguments("peakopt/schedule", given, unknown)
    selection = Selection(
        machines=listed_names("machines", machines),
        tiers=listed_names("tiers", tiers),
        limit=args["limit"],
        seed=args["seed"],
    )
    loaded = suite_argument(suite)
    candidates = chosen(lambda: selection.candidates(loaded))
    if args["split"] == "hard" and candidates:
        # the split needs the optimum of every candidate: their references come first
        path = _reference_file(candidates, loaded, reference, args["time_limit"])
        hard = hard_pairs(loaded, checked_references(path, candidates), candidates)
        candidates = [(w, m) for w, m in candidates if (w.id, m.name) in hard]
    pairs = chosen(lambda: selection.order(candidates))
    if not pairs:
        where = " in the hard split" if args["split"] == "hard" else ""
        raise TaskError(f"the selection holds no workflow × machine to schedule{where}")
    if args["split"] != "hard":
        path = _reference_file(pairs, loaded, reference, args["time_limit"])
    samples = [schedule_sample(p, args["setting"], suite, path) for p in pairs]
    dataset = MemoryDataset(samples, name=f"peakopt-{args['setting']}")
    metadata: dict[str, Any] = {
        "suite": suite,
        "setting": args["setting"],
        "reference": path,
        "split": args["split"],
        "arguments": args,
        # the report's provenance: which suite, judged by which code
        "suite_hash": suite_identity(loaded),
        "peakopt": peakopt_version(),
        "oracle": oracle_identity(),
    }
    return Task(
        dataset=dataset,
        solver=answer(args["structured"], "schedule"),
        scorer=oracle(suite, path),
        metadata=metadata,
        version=TASK_VERSION,
        epochs=Epochs(1, EPOCHS_REDUCER),
    )
