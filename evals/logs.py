"""Inspect ``.eval`` logs as peakopt's inputs: the answers in them, and the scores the tasks gave.

``peakopt score`` and ``plan-score`` (and ``plot``) read a log's samples as the
records they read from JSON Lines: one per sample, ``{"id", "workflow",
"machine", "setting", "source", "response"}`` with the evaluated model's name as
the source and the final answer's text (no reasoning, as the tasks' scorers
read it) as the response, so the same answers give the same scores.
``peakopt report`` reads the oracle's rows the ``peakopt/schedule`` scorer kept
in each score's metadata.

``inspect_ai`` is imported when a log is read, never before: the command line
starts without it, and says how to install it when it is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from peakopt.instances.errors import InputError
from peakopt.instances.records import Record
from peakopt.oracle.rows import ScoreRow

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

#: The file suffix of Inspect's logs.
SUFFIX = ".eval"
#: Where the tasks' scorers keep the oracle's row in a score's metadata.
ROW_KEY = "row"
PLAN_ROW_KEY = "plan_row"

INSTALL = "pip install 'peakopt[eval]'"


def is_eval_log(path: str | Path) -> bool:
    """Whether ``path`` names an Inspect log (by its ``.eval`` suffix)."""
    return Path(path).suffix.lower() == SUFFIX


def _samples(path: str | Path) -> tuple[str, list[EvalSample], str | None]:
    """The evaluated model's name, the samples of the log at ``path``, and why its run failed.

    The last is None unless the evaluation ended in error (a failed run keeps
    the samples it finished).

    Raises
    ------
    InputError
        When inspect-ai is not installed, or the file is not a readable log.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(path, "", f"is an Inspect log; reading it needs inspect-ai: {INSTALL}") from None
    if not Path(path).is_file():
        raise InputError(path, "", "does not exist")
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # a damaged zip, another format: whatever inspect_ai raises, one line
        raise InputError(path, "", f"is not a readable Inspect log ({type(exc).__name__}: {exc})") from None
    if not log.samples:
        raise InputError(path, "", f"the log holds no samples (status {log.status})")
    failure = None
    if log.status == "error":
        message = log.error.message if log.error else "no message"
        failure = f"the evaluation failed ({message.splitlines()[0][:200]})"
    return log.eval.model, list(log.samples), failure


def _record(sample: EvalSample, model: str) -> dict[str, Any]:
    metadata = sample.metadata or {}
    record: dict[str, Any] = {"id": str(sample.id)}
    for key in ("workflow", "machine", "setting"):
        if metadata.get(key) is not None:
            record[key] = metadata[key]
    if sample.epoch > 1:
        record["epoch"] = sample.epoch
    record.update(source=model, response=sample.output.completion)
    return record


def log_records(path: str | Path) -> list[Record]:
    """One record per sample of the log, in the log's order (numbered from 1).

    A sample that ended in an error keeps its record (its response is what
    the model said, often nothing) and the error, so that it is scored
    invalid with that reason, never dropped.

    Raises
    ------
    InputError
        When inspect-ai is not installed, or the file is not a readable log.
    """
    model, samples, _ = _samples(path)
    records = []
    for number, sample in enumerate(samples, start=1):
        error = None
        if sample.error is not None:
            error = f"the sample failed: {(sample.error.message.strip().splitlines() or ['no message'])[0]}"
        records.append(Record(number, _record(sample, model), error))
    return records


def _rows(samples: list[EvalSample], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, sample in enumerate(samples, start=1):
        for score in (sample.scores or {}).values():
            if score.metadata and key in score.metadata:
                yield number, score.metadata[key]
                break


def log_score_rows(path: str | Path) -> list[ScoreRow]:
    """The oracle's rows the ``peakopt/schedule`` scorer kept in the log, one per scored sample.

    Raises
    ------
    InputError
        When the log cannot be read, holds no such scores (a planning log, an
        unscored one), or a row is damaged.
    """
    _, samples, failure = _samples(path)
    found = list(_rows(samples, ROW_KEY))
    if not found:
        if any(True for _ in _rows(samples, PLAN_ROW_KEY)):
            raise InputError(path, "", "is a planning log (peakopt/plan), not a scheduling one")
        if failure:
            raise InputError(path, "", f"holds no scores: {failure}")
        rule = "holds no peakopt/schedule scores; score its answers with peakopt score SUITE --schedules LOG"
        raise InputError(path, "", rule)
    rows = []
    for number, data in found:
        try:
            rows.append(ScoreRow.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(path, f"sample {number}", f"not a score row ({where}: {first['msg']})") from None
    return rows
