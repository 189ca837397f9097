"""Reading what ``peakopt score`` reads and writes: answers, references, score files.

``score``, ``plot`` and ``report`` read the same files the same way: one home for the readers,
so that no command imports another.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError

from peakopt.cli.common import warn
from peakopt.cli.targets import Scopes
from peakopt.evals.logs import is_eval_log, log_records
from peakopt.instances import InputError
from peakopt.instances.records import Record, read_records, reference_lines
from peakopt.models import Machine, Workflow
from peakopt.oracle.judge.references import Checked, check_references
from peakopt.oracle.tables.rows import PlanRow, ScoreRow, not_a_row

#: Fields only a planning row has: a file holding them is plan-score output, not scheduling scores.
PLAN_ONLY = frozenset(PlanRow.model_fields) - frozenset(ScoreRow.model_fields)


def answer_records(path: str, kind: str = "schedule") -> list[Record]:
    """The records of a JSON Lines file, or of an Inspect log's samples (the model as the source).

    A log must be one of the task ``kind`` (``schedule``, ``plan``); that it is
    incomplete, or that samples errored, is said in one ``Warning:`` line each.
    """
    return log_records(path, kind, warn) if is_eval_log(path) else read_records(path)


def scope_pairs(scopes: Scopes) -> list[tuple[Workflow, Machine]]:
    """Every workflow × machine the inputs judge records on (each file's scope)."""
    return [(w, m) for suite in scopes.suites for w in suite.workflows for m in suite.machines]


def load_references(path: str | None, pairs: Iterable[tuple[Workflow, Machine]]) -> Checked:
    """The references of ``path`` (none without one), checked against the inputs they are used for.

    Raises
    ------
    peakopt.instances.InputError
        When a line is not a reference result.
    peakopt.oracle.judge.references.InvalidReference
        When a reference contradicts itself or the inputs (another workflow
        under the same id, a makespan its starts do not give...).
    """
    if not path:
        return {}
    return check_references(path, reference_lines(path), pairs)


def read_scores(path: str) -> list[ScoreRow]:
    """Score rows of a JSON Lines file that `peakopt score -o` wrote; a bad line is an InputError.

    A planning row (``peakopt plan-score -o``) is refused: read as a score
    row it would pass (every metric is optional) and count as all zeros.
    """
    rows = []
    for record in read_records(path):
        if record.data is None:
            raise InputError(path, f"line {record.line}", record.error or "not a score record")
        if PLAN_ONLY & record.data.keys():
            rule = "is a planning score (peakopt plan-score -o), not a scheduling score (peakopt score -o)"
            raise InputError(path, f"line {record.line}", rule)
        try:
            rows.append(ScoreRow.model_validate(record.data))
        except ValidationError as exc:
            raise InputError(path, f"line {record.line}", not_a_row(exc)) from None
    return rows
