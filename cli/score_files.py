"""Reading what ``peakopt score`` reads and writes: answers, references, score files.

``score``, ``plot`` and ``report`` read the same files the same way: one home for the readers,
so that no command imports another.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from peakopt.cli.common import warn

# the readers, the logs, the models and the rows are imported by the functions that use them, so
# that the --help of a command reading these files imports no pydantic
if TYPE_CHECKING:
    from peakopt.cli.targets import Scopes
    from peakopt.instances.records import Record
    from peakopt.models import Machine, Workflow
    from peakopt.oracle.judge.references import Checked
    from peakopt.oracle.tables.rows import ScoreRow


@functools.cache
def plan_only() -> frozenset[str]:
    """Fields only a planning row has: a file holding them is plan-score output, not scheduling scores."""
    from peakopt.oracle.tables.rows import PlanRow, ScoreRow

    return frozenset(PlanRow.model_fields) - frozenset(ScoreRow.model_fields)


def answer_records(path: str, kind: str = "schedule") -> list[Record]:
    """The records of a JSON Lines file, or of an Inspect log's samples (the model as the source).

    A log must be one of the task ``kind`` (``schedule``, ``plan``); that it is
    incomplete, or that samples errored, is said in one ``Warning:`` line each.
    """
    from peakopt.evals.logs import is_eval_log, log_records
    from peakopt.instances.records import read_records

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
    from peakopt.instances.records import reference_lines
    from peakopt.oracle.judge.references import check_references

    if not path:
        return {}
    return check_references(path, reference_lines(path), pairs)


def read_scores(path: str) -> list[ScoreRow]:
    """Score rows of a JSON Lines file that `peakopt score -o` wrote; a bad line is an InputError.

    A planning row (``peakopt plan-score -o``) is refused: read as a score
    row it would pass (every metric is optional) and count as all zeros.
    """
    from pydantic import ValidationError

    from peakopt.instances import InputError
    from peakopt.instances.records import read_records
    from peakopt.oracle.tables.rows import ScoreRow, not_a_row

    rows = []
    for record in read_records(path):
        if record.data is None:
            raise InputError(path, f"line {record.line}", record.error or "not a score record")
        if plan_only() & record.data.keys():
            rule = "is a planning score (peakopt plan-score -o), not a scheduling score (peakopt score -o)"
            raise InputError(path, f"line {record.line}", rule)
        try:
            rows.append(ScoreRow.model_validate(record.data))
        except ValidationError as exc:
            raise InputError(path, f"line {record.line}", not_a_row(exc)) from None
    return rows
