"""Score one input record end to end: find its instance, read, replay, evaluate, compare.

A record is a decoded JSON object: a schedule ``{"workflow", "machine",
"source", "starts"}`` or a raw LLM answer ``{"workflow", "machine", "source",
"response"}`` (an optional ``id`` is carried through). Whatever is wrong with
it — unreadable, an unknown workflow, no schedule in the text, a missing
step — the result is a :class:`~peakopt.oracle.tables.rows.ScoreRow` marked invalid
with the reasons; scoring a record never raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from peakopt.models import Machine, Schedule, SolveResult, Suite, Workflow
from peakopt.oracle.answers.names import DelayFrom, Missing, Mode
from peakopt.oracle.answers.parse import Parsed, parse_response, parse_starts
from peakopt.oracle.answers.reasons import UNSCORED
from peakopt.oracle.answers.replay import replay
from peakopt.oracle.answers.structure import Structure, parse_structure, structure_from_response
from peakopt.oracle.judge import metrics
from peakopt.oracle.judge.evaluate import evaluate, with_reference
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.planning import plan_score
from peakopt.oracle.tables.rows import PlanRow, ScoreRow

#: (workflow id, machine name) -> the reference result for that pair.
ReferenceIndex = Mapping[tuple[str, str | None], SolveResult]


@dataclass(frozen=True)
class ReplayOptions:
    """How records are replayed (see :mod:`peakopt.oracle.answers.replay`)."""

    mode: Mode = "literal"
    delay_from: DelayFrom = "ready"
    missing: Missing = "invalid"


def index_references(results: Iterable[SolveResult]) -> ReferenceIndex:
    """References by (workflow, machine); a later result for the same pair replaces an earlier one.

    The results are not checked here: files read by the command line go
    through :func:`peakopt.oracle.judge.references.check_references` first.
    """
    return {(r.workflow, r.machine): r for r in results}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def identity(record: Mapping[str, Any] | None, line: int | None = None) -> dict[str, Any]:
    """The fields that say which record a row is about: line, id, workflow, machine, source, setting.

    ``setting`` is the prompt setting the answer was given in (copied from the
    prompt record), so that rows can be grouped by it.
    """
    record = record or {}
    return {
        "line": line,
        "id": _text(record.get("id")),
        "workflow": _text(record.get("workflow")),
        "machine": _text(record.get("machine")),
        "source": _text(record.get("source")),
        "setting": _text(record.get("setting")),
        "labels": labels(record),
    }


#: Record keys the oracle reads or a prompt record carries: never labels.
READ_KEYS = frozenset(
    {"line", "id", "workflow", "machine", "source", "setting", "tier", "task"}
    | {"response", "starts", "prompt", "context", "output_schema"}
)
#: A label is short: a long text (a prompt copied along) says nothing to group by.
LABEL_LENGTH = 100


def labels(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's other short scalar fields, as text (see :attr:`ScoreRow.labels`)."""
    found: dict[str, str] = {}
    for key, value in record.items():
        if key in READ_KEYS or key in STRUCTURE_FIELDS or value is None or isinstance(value, dict | list):
            continue
        text = json.dumps(value) if isinstance(value, bool) else str(value)
        if len(text) <= LABEL_LENGTH:
            found[str(key)] = text
    return found


def find_workflow(record: Mapping[str, Any], suite: Suite) -> Workflow | Violation:
    """The suite's workflow that ``record`` names, or why there is none."""
    name = record.get("workflow")
    if not isinstance(name, str):
        return Violation(kind="instance", message="the record names no workflow")
    try:
        return suite.workflow(name)
    except KeyError:
        return Violation(kind="instance", message=f"workflow {name!r} is not in the suite")


def find_machine(record: Mapping[str, Any], suite: Suite) -> Machine | Violation:
    """The suite's machine that ``record`` names (or its only machine), or why there is none."""
    name = record.get("machine")
    if name is None:
        if len(suite.machines) == 1:
            return suite.machines[0]
        count = len(suite.machines)
        return Violation(kind="instance", message=f"the record names no machine and the suite has {count}")
    try:
        return suite.machine(str(name))
    except KeyError:
        return Violation(kind="instance", message=f"machine {name!r} is not in the suite")


def tier(workflow: Workflow) -> str | None:
    """``workflow.meta["tier"]`` as text, if set."""
    return _text(workflow.meta.get("tier"))


def read_timings(record: Mapping[str, Any], workflow: Workflow) -> Parsed | Violation:
    """The starts (or delays) a record gives: its ``starts`` or the schedule in its ``response``."""
    steps = workflow.index.keys()
    if "starts" in record:
        parsed = parse_starts(record["starts"], steps)
        return parsed or Violation(kind="parse", message="'starts' holds no start times")
    if "response" in record:
        response = record["response"]
        if not isinstance(response, str):
            return Violation(kind="parse", message=f"'response' is not text ({type(response).__name__})")
        return parse_response(response, steps)
    return Violation(kind="parse", message="the record has neither 'starts' nor 'response'")


def score_record(
    record: Mapping[str, Any] | None,
    suite: Suite,
    references: ReferenceIndex | None = None,
    options: ReplayOptions | None = None,
    *,
    line: int | None = None,
    error: str | None = None,
) -> ScoreRow:
    """Score one record; never raises on bad content.

    Parameters
    ----------
    record
        The decoded record, or None when its line could not be read.
    suite
        The workflows and machines records refer to.
    references
        Reference results by (workflow, machine), for the gap figures.
    options
        Replay mode, delay origin, what to do with missing steps.
    line, error
        The record's line in its file, and why it could not be read, if so.

    Returns
    -------
    ScoreRow
    """
    row = _score_record(record, suite, references, options or ReplayOptions(), line, error)
    reference = None
    if references and row.workflow is not None:
        reference = references.get((row.workflow, row.machine))
    return with_efficiency(row, reference)


def with_efficiency(row: ScoreRow, reference: SolveResult | None) -> ScoreRow:
    """``row`` with its efficiency against ``reference``: every scored row gets one.

    An answer that could not be read at all, for a pair with a proven optimum,
    earns 0 like an unsafe one: leaving it out would reward garbage.
    """
    makespan = row.makespan
    if makespan is not None:
        soft_overflow = (row.avoidable_cva_soft or 0.0) > 0
        makespan = metrics.charged_makespan(makespan, row.slowed_makespan, reference, soft_overflow)
    figure = metrics.efficiency(makespan, row.valid and row.safe, reference)
    return row if figure == row.efficiency else row.model_copy(update={"efficiency": figure})


def _score_record(
    record: Mapping[str, Any] | None,
    suite: Suite,
    references: ReferenceIndex | None,
    options: ReplayOptions,
    line: int | None,
    error: str | None,
) -> ScoreRow:
    ident = identity(record, line)
    if error is not None or record is None:
        return ScoreRow.invalid([Violation(kind="parse", message=error or "unreadable record")], **ident)
    workflow = find_workflow(record, suite)
    if isinstance(workflow, Violation):
        return ScoreRow.invalid([workflow], **ident)
    machine = find_machine(record, suite)
    if isinstance(machine, Violation):
        return ScoreRow.invalid([machine], **ident)
    ident.update(workflow=workflow.id, machine=machine.name, tier=tier(workflow))
    parsed = read_timings(record, workflow)
    if isinstance(parsed, Violation):
        return ScoreRow.invalid([parsed], **ident)
    read = {"requested": parsed.values, "requested_kind": parsed.kind, "from_reasoning": parsed.reasoning}
    if any(p.kind in UNSCORED for p in parsed.problems):
        # the last value may be cut (8 of 8.5): nothing of a cut-off answer is scored
        return ScoreRow.invalid(parsed.problems, **ident, **read)
    replayed = replay(workflow, parsed, options.mode, options.delay_from, options.missing)
    problems = [*parsed.problems, *replayed.problems]
    schedule = Schedule(
        workflow=workflow.id, machine=machine.name, starts=replayed.starts, source=ident["source"]
    )
    score = evaluate(workflow, machine, schedule)
    reference = (references or {}).get((workflow.id, machine.name))
    if not problems:
        score = with_reference(score, reference)
    return ScoreRow.from_score(
        score,
        problems,
        line=line,
        id=ident["id"],
        tier=ident["tier"],
        setting=ident["setting"],
        labels=ident["labels"],
        **read,
        starts=replayed.starts,
        pushed=replayed.pushed,
        pushed_seconds=replayed.pushed_seconds,
        filled=replayed.filled,
        reference_status=reference.status if reference else None,
    )


#: Record keys that hold a predicted structure (besides ``response``), in the order tried.
STRUCTURE_FIELDS = ("dependencies", "dependency_structure", "predecessors", "edges")


def read_structure(record: Mapping[str, Any], workflow: Workflow) -> Structure | Violation:
    """The dependency structure a prediction record gives, or why there is none."""
    steps = workflow.index.keys()
    for key in STRUCTURE_FIELDS:
        if key in record:
            found = parse_structure({key: record[key]}, steps)  # under its key: {"edges": []} is no edge
            return found or Violation(kind="parse", message=f"{key!r} holds no dependency structure")
    if "response" in record:
        response = record["response"]
        if not isinstance(response, str):
            return Violation(kind="parse", message=f"'response' is not text ({type(response).__name__})")
        return structure_from_response(response, steps)
    fields = ", ".join(repr(k) for k in (*STRUCTURE_FIELDS, "response"))
    return Violation(kind="parse", message=f"the record has none of {fields}")


def score_prediction(
    record: Mapping[str, Any] | None, suite: Suite, *, line: int | None = None, error: str | None = None
) -> PlanRow:
    """Planning metrics of one prediction record; never raises on bad content.

    Parameters
    ----------
    record
        ``{"workflow", "source", "dependencies" | "edges" | "response"}``, or
        None when its line could not be read.
    suite
        The true workflows.
    line, error
        The record's line in its file, and why it could not be read, if so.
    """
    ident = identity(record, line)
    del ident["machine"]
    if error is not None or record is None:
        return PlanRow.invalid([Violation(kind="parse", message=error or "unreadable record")], **ident)
    workflow = find_workflow(record, suite)
    if isinstance(workflow, Violation):
        return PlanRow.invalid([workflow], **ident)
    ident.update(workflow=workflow.id, tier=tier(workflow))
    structure = read_structure(record, workflow)
    if isinstance(structure, Violation):
        return PlanRow.invalid([structure], **ident)
    if structure.problems:
        return PlanRow.invalid([Violation(kind="parse", message=m) for m in structure.problems], **ident)
    return PlanRow.from_score(plan_score(workflow, structure), structure.edges, **ident)
