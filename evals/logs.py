"""Inspect ``.eval`` logs as peakopt's inputs: the answers in them, and the scores the tasks gave.

``peakopt score`` and ``plan-score`` (and ``plot``) read a log's samples as the
records they read from JSON Lines: one per sample, ``{"id", "workflow",
"machine", "setting", "source", "response"}`` with the evaluated model's name as
the source and the final answer's text (no reasoning, as the tasks' scorers
read it) as the response, so the same answers give the same scores.
``peakopt report`` reads the oracle's rows the ``peakopt/schedule`` scorer kept
in each score's metadata.

Each command takes the logs of its task (:meth:`Log.require`): another
peakopt task's log, or another Inspect task's, is refused on one line saying
what it is. A sample that errored is scored invalid with its error by both
(:func:`errored_row` is ``peakopt score``'s row of its record), and a run
cut short (cancelled, failed, still running) is said, with how many samples
the log holds of how many (:meth:`Log.tell`).

``inspect_ai`` is imported when a log is read, never before: the command line
starts without it, and says how to install it when it is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from peakopt.campaign.provenance import Provenance, row_facts
from peakopt.evals.command_line import inspect_command, solver_named
from peakopt.instances.errors import InputError
from peakopt.instances.records import Record, read_references
from peakopt.models import SolveResult
from peakopt.oracle.tables.rows import ScoreRow, not_a_row

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

#: The file suffix of Inspect's logs.
SUFFIX = ".eval"
#: Where the tasks' scorers keep the oracle's row in a score's metadata.
ROW_KEY = "row"
PLAN_ROW_KEY = "plan_row"

INSTALL = "pip install 'peakopt[eval]'"


def is_eval_log(path: str | Path) -> bool:
    """Whether ``path`` names an Inspect log (by its ``.eval`` suffix)."""
    return Path(path).suffix.lower() == SUFFIX


#: What each task's logs are called in the messages, and the command that scores their answers.
LOG_KINDS = {
    "schedule": ("a scheduling log (peakopt/schedule)", "peakopt score SUITE --schedules LOG"),
    "plan": ("a planning log (peakopt/plan)", "peakopt plan-score --truth SUITE --predictions LOG"),
}
#: How the samples that errored are counted, by the log's task: invalid, as an unreadable answer is.
ERRORED = {
    "schedule": "counted invalid, efficiency 0 where the optimum is proven (as an unreadable answer)",
    "plan": "counted invalid (as an unreadable answer)",
}

Warn = Callable[[str], None]


@dataclass(frozen=True)
class Log:
    """An Inspect log, read: which task made it, its samples, and how its run ended.

    Attributes
    ----------
    path
        Where it was read from.
    task
        The task's name (``peakopt/schedule``...).
    kind
        ``schedule`` or ``plan`` when the samples are those of peakopt's tasks, else None.
    model
        The evaluated model's name.
    samples
        The samples the log holds.
    expected
        How many samples the run was to have (every epoch).
    status
        How the run ended: ``success``, ``cancelled``, ``error`` or ``started``.
    failure
        Why the run failed, when it did (a failed run keeps the samples it finished).
    metadata
        The task's metadata (the scheduling task's ``reference`` file...).
    created
        When the evaluation started (ISO 8601, as Inspect records it).
    version
        The task's version (``task_version``).
    arguments
        The task's arguments (``-T``), as Inspect recorded them.
    epochs
        How many times each sample was to run.
    command
        The ``inspect eval`` command that runs it again
        (:func:`~peakopt.evals.command_line.inspect_command`).
    solver
        The solver that replaced the task's own, with its arguments; None: the model answered.
    """

    path: Path
    task: str
    kind: str | None
    model: str
    samples: list[EvalSample]
    expected: int
    status: str
    failure: str | None
    metadata: dict[str, Any]
    created: str = ""
    version: int | str = 0
    arguments: dict[str, Any] = field(default_factory=dict)
    epochs: int = 1
    command: str = ""
    solver: str | None = None

    def require(self, kind: str) -> None:
        """Refuse a log that is not of the task ``kind`` (``schedule``, ``plan``), saying what it is.

        Raises
        ------
        InputError
            One line: what the log is, and how to score it.
        """
        if self.kind == kind:
            return
        if self.kind is None:
            rule = f"is a log of the Inspect task {self.task!r}, not of peakopt/schedule or peakopt/plan"
            raise InputError(self.path, "", rule)
        what, command = LOG_KINDS[self.kind]
        wanted = "planning" if kind == "plan" else "scheduling"
        raise InputError(self.path, "", f"is {what}, not a {wanted} one; score it with {command}")

    def tell(self, warn: Warn) -> None:
        """Say, on one line each, that the run is incomplete and that samples errored (if so)."""
        if self.status != "success" or len(self.samples) < self.expected:
            how = {"cancelled": "was cancelled", "error": "failed", "started": "is still running"}
            ended = how.get(self.status, f"ended {self.status}")
            warn(
                f"{self.path}: the log holds {len(self.samples)} of its {self.expected} samples "
                f"(the evaluation {ended}): the figures are of those"
            )
        errored = [s for s in self.samples if s.error is not None]
        if errored:
            first = sample_error(errored[0]).removeprefix("the sample failed: ")
            warn(
                f"{self.path}: {len(errored)} of {len(self.samples)} samples of the log errored "
                f"({first}): {ERRORED[self.kind or 'schedule']}"
            )


def sample_error(sample: EvalSample) -> str:
    """Why a sample errored, on one line."""
    message = sample.error.message if sample.error is not None else ""
    return f"the sample failed: {(message.strip().splitlines() or ['no message'])[0][:200]}"


def _kind(samples: list[EvalSample]) -> str | None:
    """``schedule`` or ``plan`` when every sample is one of that peakopt task, else None."""
    metadata = [s.metadata or {} for s in samples]
    if all(m.get("task") == "plan" and "workflow" in m for m in metadata):
        return "plan"
    if all("workflow" in m and "machine" in m for m in metadata):
        return "schedule"
    return None


def _expected(log: EvalLog) -> int:
    """How many samples the run was to have: the dataset's (or those asked for), every epoch."""
    count = log.eval.dataset.samples or 0
    config = log.eval.config
    if isinstance(config.sample_id, list):
        count = len(config.sample_id)
    elif config.sample_id is not None:
        count = 1
    if isinstance(config.limit, int):
        count = min(count, config.limit)
    elif isinstance(config.limit, tuple | list):
        count = min(count, max(0, config.limit[1] - config.limit[0]))
    return count * (config.epochs or 1)


def read_log(path: str | Path) -> Log:
    """The Inspect log at ``path``.

    Raises
    ------
    InputError
        When inspect-ai is not installed, or the file is not a readable log
        (missing, a directory, damaged, or holding no samples).
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        rule = f"is an Inspect log; reading it needs the eval extra: {INSTALL}"
        raise InputError(path, "", rule) from None
    source = Path(path)
    if source.is_dir():
        rule = "is a directory, not an Inspect log file (the logs of a run are the .eval files in it)"
        raise InputError(path, "", rule)
    if not source.is_file():
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
        # the first line whole: a message cut short is cut mid-sentence (or mid-parenthesis)
        failure = f"the evaluation failed ({(message.strip().splitlines() or ['no message'])[0]})"
    samples = list(log.samples)
    task = log.eval.task
    return Log(
        source,
        task,
        _kind(samples),
        log.eval.model,
        samples,
        _expected(log),
        log.status,
        failure,
        dict(log.eval.metadata or {}),
        str(log.eval.created),
        log.eval.task_version,
        dict(log.eval.task_args or {}),
        log.eval.config.epochs or 1,
        inspect_command(log.eval),
        solver_named(log.eval),
    )


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


def log_records(path: str | Path, kind: str = "schedule", warn: Warn = lambda message: None) -> list[Record]:
    """One record per sample of a log of the task ``kind``, in the log's order (numbered from 1).

    A sample that ended in an error keeps its record (its response is what
    the model said, often nothing) and the error, so that it is scored
    invalid with that reason, never dropped; ``warn`` is told so, and that a
    run is incomplete, in one line each.

    Raises
    ------
    InputError
        When inspect-ai is not installed, the file is not a readable log, or
        the log is of another task (saying which).
    """
    log = read_log(path)
    log.require(kind)
    log.tell(warn)
    return [
        Record(number, _record(sample, log.model), sample_error(sample) if sample.error is not None else None)
        for number, sample in enumerate(log.samples, start=1)
    ]


def _row(sample: EvalSample, key: str) -> dict[str, Any] | None:
    for score in (sample.scores or {}).values():
        if score.metadata and key in score.metadata:
            found: dict[str, Any] = score.metadata[key]
            return found
    return None


def _task_references(log: Log) -> dict[tuple[str, str], SolveResult]:
    """The references the scheduling task scored against (its ``reference`` file), if it is still there."""
    path = log.metadata.get("reference")
    if not isinstance(path, str) or not Path(path).is_file():
        return {}
    try:
        return {(r.workflow, r.machine or ""): r for r in read_references(path)}
    except InputError:
        return {}


def log_score_rows(path: str | Path, warn: Warn = lambda message: None) -> list[ScoreRow]:
    """The oracle's rows the ``peakopt/schedule`` scorer kept in the log, one per sample.

    A sample that errored has no row of the scorer: it is scored invalid with
    its error, as ``peakopt score`` scores its record (efficiency 0 where the
    task's references prove the optimum), and ``warn`` is told so.

    Raises
    ------
    InputError
        When the log cannot be read, is of another task, holds no such
        scores (an unscored one), or a row is damaged.
    """
    return read_score_log(path, warn)[1]


def read_score_log(path: str | Path, warn: Warn = lambda message: None) -> tuple[Log, list[ScoreRow]]:
    """The log read, and the rows of :func:`log_score_rows` (one reading of the file for both).

    Raises
    ------
    InputError
        As :func:`log_score_rows`.
    """
    log = read_log(path)
    log.require("schedule")
    found = [(number, sample, _row(sample, ROW_KEY)) for number, sample in enumerate(log.samples, start=1)]
    if all(row is None for _, sample, row in found if sample.error is None):
        if log.failure:
            raise InputError(path, "", f"holds no scores: {log.failure}")
        rule = "holds no peakopt/schedule scores; score its answers with peakopt score SUITE --schedules LOG"
        raise InputError(path, "", rule)
    log.tell(warn)
    references = _task_references(log) if any(s.error is not None for s in log.samples) else {}
    rows = []
    for number, sample, data in found:
        if data is None:
            if sample.error is not None:
                rows.append(errored_row(sample, log.model, references))
            continue
        try:
            rows.append(ScoreRow.model_validate(data))
        except ValidationError as exc:
            raise InputError(path, f"sample {number}", not_a_row(exc)) from None
    return log, rows


def log_provenance(log: Log, rows: Sequence[ScoreRow]) -> Provenance:
    """A scheduling log's provenance: its task, arguments, model, suite and code, as the log records them.

    The suite's hash, peakopt's version and the oracle's identity are in the task's metadata
    (:func:`peakopt.evals.schedule.schedule`); a log made before the task recorded them has
    them as not recorded.
    """
    facts = row_facts(rows)
    seed = log.arguments.get("seed")
    split = log.metadata.get("split")
    return Provenance(
        str(log.path),
        "Inspect log",
        suite=_text(log.metadata.get("suite")),
        suite_hash=_text(log.metadata.get("suite_hash")),
        splits=(str(split),) if split is not None else (),
        epochs=log.epochs,
        task=f"{log.task} (version {log.version})",
        arguments=log.arguments,
        command=log.command or None,
        created=log.created or None,
        peakopt=_text(log.metadata.get("peakopt")),
        oracle=_text(log.metadata.get("oracle")),
        **(facts | {"sources": (log.model,), "seeds": (f"shuffle {seed}",) if seed is not None else ()}),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def errored_row(sample: EvalSample, model: str, references: dict[tuple[str, str], SolveResult]) -> ScoreRow:
    """The row ``peakopt score`` gives the record of a sample that errored (see :func:`log_score_rows`).

    As :func:`peakopt.oracle.tables.score_rows.score_record` does for a record with an
    error: invalid with that reason, and its efficiency against the pair's reference.
    """
    from peakopt.oracle.judge.verdict import Violation
    from peakopt.oracle.tables.score_rows import identity, with_efficiency

    record = _record(sample, model)
    row = ScoreRow.invalid([Violation(kind="parse", message=sample_error(sample))], **identity(record))
    return with_efficiency(row, references.get((row.workflow or "", row.machine or "")))
