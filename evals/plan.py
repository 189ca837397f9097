"""``peakopt/plan`` (PeakBench's Dimension I): a model reads a workflow's dependency structure.

One sample per workflow: the planning prompt of ``peakopt prompt --task plan``
(:func:`peakopt.instances.prompts.plan_prompt_record`: the user's request and
every step's tool call, whose ``$step.output`` arguments name what it
consumes; no dependencies), the sample metadata ``workflow``, ``task`` and
``tier``. The scorer reads the final answer's text as ``peakopt plan-score``
reads a ``response`` record and reports the oracle's planning metrics
(:mod:`peakopt.oracle.tables.planning`; see :data:`peakopt.evals.values.PLAN_KEYS`)
with their mean and standard error, keeping the whole row in each score's
metadata.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from peakopt.evals.answer import answer
from peakopt.evals.arguments import TaskError, check_arguments, chosen, listed_names, suite_argument
from peakopt.evals.logs import PLAN_ROW_KEY
from peakopt.evals.schedule import EPOCHS_REDUCER, TASK_VERSION
from peakopt.evals.suites import Selection, load_suite
from peakopt.evals.values import PLAN_KEYS, plan_values
from peakopt.instances.prompts import plan_prompt_record
from peakopt.models import Workflow
from peakopt.oracle.tables.score_rows import score_prediction


def plan_sample(workflow: Workflow) -> Sample:
    """The planning sample of one workflow.

    Raises
    ------
    ValueError
        Naming a step without a tool call (nothing to read its dependencies from).
    """
    record = plan_prompt_record(workflow)
    metadata = {
        "workflow": workflow.id,
        "task": "plan",
        "tier": record.get("tier"),
        "output_schema": record["output_schema"],
    }
    return Sample(input=record["prompt"], id=workflow.id, metadata=metadata)


@scorer(metrics={key: [mean(), stderr()] for key in PLAN_KEYS})
def structure(suite: str) -> Scorer:
    """Score the final answer's dependency structure against the suite's true workflow.

    Parameters
    ----------
    suite
        The suite the samples come from (a path or ``bundled:NAME``).
    """
    loaded = load_suite(suite)

    async def score(state: TaskState, target: Target) -> Score:
        record = {
            "id": str(state.sample_id),
            "workflow": state.metadata["workflow"],
            "source": str(state.model),
            "response": state.output.completion,
        }
        row = score_prediction(record, loaded)
        verdict = "exact match" if row.exact_match else "read, not exact"
        return Score(
            value=plan_values(row),
            answer=state.output.completion,
            explanation="; ".join(row.reasons) or verdict,
            metadata={PLAN_ROW_KEY: row.model_dump(mode="json")},
        )

    return score


@task
def plan(
    suite: str = "bundled:default",
    tiers: str | list[str] | None = None,
    limit: int | None = None,
    seed: int | None = None,
    structured: bool = False,
    **unknown: Any,
) -> Task:
    """Read each workflow's dependencies from its request and tool calls; scored by the planning metrics.

    Every argument is checked first, with the command line's ranges
    (:mod:`peakopt.evals.arguments`); a wrong one, or one the task does not
    have, is one message naming it.

    Parameters
    ----------
    suite
        Workflows whose steps carry their tool calls (generated and bundled suites do).
    tiers
        Only these workflow tiers (comma-separated or a list, each once).
    limit, seed
        At most ``limit`` samples, drawn after shuffling with ``seed`` (suite order without one).
    structured
        Send the answer's JSON Schema as the response format (structured output).
    """
    given = {"suite": suite, "tiers": tiers, "limit": limit, "seed": seed, "structured": structured}
    args = check_arguments("peakopt/plan", given, unknown)
    selection = Selection(tiers=listed_names("tiers", tiers), limit=args["limit"], seed=args["seed"])
    loaded = suite_argument(suite)
    workflows = chosen(lambda: selection.order(selection.workflows(loaded)))
    if not workflows:
        raise TaskError("the selection holds no workflow to plan")
    dataset = MemoryDataset([plan_sample(w) for w in workflows], name="peakopt-plan")
    metadata: dict[str, Any] = {"suite": suite, "arguments": args}
    return Task(
        dataset=dataset,
        solver=answer(args["structured"], "dependencies"),
        scorer=structure(suite),
        metadata=metadata,
        version=TASK_VERSION,
        epochs=Epochs(1, EPOCHS_REDUCER),
    )
