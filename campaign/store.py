"""The results store of a stress campaign: one SQLite file (standard library, WAL mode).

What counts as a store, read-only opening and the write lock are :mod:`peakopt.campaign.storage`'s.
Tables:

- ``instances``: every workflow by content hash, with its JSON document (so
  that the worst cases can be exported and drawn later);
- ``machines``: every machine profile by content hash;
- ``refs``: the reference result (optimum or bounds) per instance × machine;
- ``search``: the worst instances adversarial searches found, with their
  gap, mutations and the method's row;
- ``results``: one row per (instance, machine, method, params) — the identity
  of the code that made it (``code``: the method's and the oracle's), the oracle's
  :class:`~peakopt.oracle.tables.rows.ScoreRow` as JSON in ``row``, its main figures
  as columns for SQL, the reference's status, makespan and lower bound, the
  wall time and, for a method that failed, the error;
- ``bounds``: the perfect-information bound of each realised scenario by its key (see
  :mod:`peakopt.campaign.hindsight`), reused by every later run, policy and method.

Results are written in transactions as they arrive: a run killed at any
moment loses at most the work in flight, and a rerun skips every key present
whose code is still the same; a row made by other code is run again and replaced.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peakopt.campaign.storage import (
    COLUMNS,
    OPTIONAL_COLUMNS,
    SCHEMA_VERSION,
    connect_read_only,
    connect_read_write,
    not_a_store,
    read_schema,
    transaction,
)
from peakopt.instances import InputError
from peakopt.instances.native import dump
from peakopt.models import Machine, SolveResult, Workflow
from peakopt.models import content_hash as content_hash
from peakopt.oracle.tables.rows import ScoreRow, not_a_row

#: (instance hash, machine hash, method, params JSON): what identifies a result row.
ResultKey = tuple[str, str, str, str]


def canonical(document: Any) -> str:
    """Compact JSON with sorted keys: equal content, equal text."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def params_text(params: dict[str, Any]) -> str:
    """The params part of a key."""
    return canonical(params)


@dataclass(frozen=True)
class Result:
    """One method's outcome on one instance × machine, as the store keeps it.

    Attributes
    ----------
    instance, machine, method, params
        The key (hashes, the method name, canonical params JSON).
    row
        The oracle's verdict, ``source`` = method; invalid with reason kind
        ``error`` when the method failed.
    seconds
        Wall time of the method (schedule and score).
    error
        Why the method failed (raised, returned garbage, hung, crashed).
    reference
        The reference the gaps were computed against.
    code
        The identity of the code that made the row (see :func:`peakopt.campaign.stress.row_code`).
    """

    instance: str
    machine: str
    method: str
    params: str
    row: ScoreRow
    seconds: float
    error: str | None
    reference: SolveResult | None
    code: str = ""

    @property
    def key(self) -> ResultKey:
        """What identifies the row."""
        return self.instance, self.machine, self.method, self.params


@dataclass(frozen=True)
class Found:
    """An instance an adversarial search judged (see :mod:`peakopt.campaign.adversarial`)."""

    method: str
    params: str
    workflow: Workflow
    machine: Machine
    gap: float | None
    evaluation: int
    mutations: tuple[str, ...]
    row: ScoreRow | None
    reference: SolveResult | None


@dataclass(frozen=True)
class StoreFacts:
    """What a store records of its making (:meth:`Store.made`).

    Attributes
    ----------
    workflows, machines
        How many workflows and machine profiles it holds.
    inputs
        A digest of their content hashes (sorted): two stores of the same inputs share it.
    finished
        When its last result was written (Unix time; None without results).
    codes
        The code identities of its rows (the methods' and the oracle's).
    params
        The methods' distinct parameters.
    peakopt
        The version of peakopt that last wrote it (None: a store written before it was recorded).
    """

    workflows: int
    machines: int
    inputs: str
    finished: float | None
    codes: tuple[str, ...]
    params: tuple[dict[str, Any], ...]
    peakopt: str | None


class Store:
    """An open results store.

    Parameters
    ----------
    path
        The SQLite file; created when missing (see :mod:`peakopt.campaign.storage` for what
        is accepted as a store).
    fresh
        Drop the store's tables and start it empty.
    read_only
        Open for reading only (``peakopt report``): nothing is ever written, and stores of
        schema 1 are read too.

    Raises
    ------
    InputError
        When the file is not a peakopt results store (left untouched), cannot be opened,
        or stays locked by another process.
    """

    def __init__(self, path: str | Path, *, fresh: bool = False, read_only: bool = False) -> None:
        self.path = Path(path)
        if read_only:
            self.db = connect_read_only(self.path)
            try:
                schema = read_schema(self.db, self.path)
            except BaseException:
                self.db.close()
                raise
            if schema is None:
                self.db.close()
                raise not_a_store(self.path, "a SQLite database without any table")
            self.schema = schema
        else:
            self.db = connect_read_write(self.path, fresh=fresh)
            self.schema = SCHEMA_VERSION

    def close(self) -> None:
        """Close the connection (everything written is already committed)."""
        self.db.close()

    def add_inputs(
        self, workflows: Iterable[tuple[str, Workflow]], machines: Iterable[tuple[str, Machine]]
    ) -> None:
        """Record the instances and machines of a campaign (once each), in one transaction."""
        with transaction(self.db, self.path):
            self.db.executemany(
                "INSERT OR IGNORE INTO instances VALUES (?, ?, ?, ?, ?)",
                (
                    (key, w.id, _text(w.meta.get("tier")), len(w.tasks), canonical(dump(w)))
                    for key, w in workflows
                ),
            )
            self.db.executemany(
                "INSERT OR IGNORE INTO machines VALUES (?, ?, ?)",
                ((key, m.name, canonical(dump(m))) for key, m in machines),
            )

    def finished(self) -> dict[ResultKey, str]:
        """The code identity of every result row present, by key."""
        found = self.db.execute("SELECT instance, machine, method, params, code FROM results")
        return {(i, m, method, p): code for i, m, method, p, code in found}

    def references(self) -> dict[tuple[str, str], SolveResult]:
        """Reference results by (instance hash, machine hash)."""
        found = self.db.execute("SELECT instance, machine, result FROM refs")
        return {(i, m): SolveResult.model_validate_json(text) for i, m, text in found}

    def write(self, references: Sequence[tuple[str, str, SolveResult]], results: Sequence[Result]) -> None:
        """New references and result rows, in one transaction."""
        now = time.time()
        with transaction(self.db, self.path):
            self.db.executemany(
                "INSERT OR REPLACE INTO refs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (i, m, r.status, r.makespan, r.lower_bound, int(r.exact), r.seconds, r.model_dump_json())
                    for i, m, r in references
                ),
            )
            self.db.executemany(_INSERT_RESULT, (_columns(result, now) for result in results))

    def write_search(self, found: Sequence[Found]) -> None:
        """Instances an adversarial search found (with their references), in one transaction."""
        self.add_inputs(
            ((content_hash(f.workflow), f.workflow) for f in found),
            ((content_hash(f.machine), f.machine) for f in found),
        )
        references = [
            (content_hash(f.workflow), content_hash(f.machine), f.reference)
            for f in found
            if f.reference is not None
        ]
        with transaction(self.db, self.path):
            self.db.executemany(
                "INSERT OR REPLACE INTO search VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        content_hash(f.workflow),
                        content_hash(f.machine),
                        f.method,
                        f.params,
                        f.gap,
                        f.evaluation,
                        canonical(list(f.mutations)),
                        None if f.row is None else f.row.model_dump_json(),
                    )
                    for f in found
                ),
            )
        self.write(references, [])

    def score_rows(self, keys: set[ResultKey] | None = None) -> list[ScoreRow]:
        """Result rows as the oracle's :class:`ScoreRow` (``source`` = method), in suite order.

        Suite order: by workflow and machine as the campaign added them, then a pair's rows by
        method (in order of first appearance) and parameters — each method's rows in the order
        of a campaign on one worker, whatever order the workers finished in. The seeded
        bootstrap resamples by position, so two runs of one campaign give the same intervals,
        digit for digit (and the same means: a float sum depends on its order).

        Parameters
        ----------
        keys
            Only the rows of these keys (e.g. one campaign's); all by default.
        """
        found = self.db.execute(
            """WITH firsts AS (SELECT method, MIN(rowid) AS first FROM results GROUP BY method)
               SELECT r.rowid, r.instance, r.machine, r.method, r.params, r.row FROM results r
               JOIN firsts f ON f.method = r.method
               LEFT JOIN instances i ON i.instance = r.instance
               LEFT JOIN machines m ON m.machine = r.machine
               ORDER BY i.rowid, m.rowid, f.first, r.params, r.rowid"""
        )
        return [self._row(number, text) for number, *key, text in found if keys is None or tuple(key) in keys]

    def _row(self, number: int, text: str) -> ScoreRow:
        """A stored row, read back; one that no schedule can have (an efficiency of 1.7) is an error."""
        try:
            return ScoreRow.model_validate_json(text)
        except ValidationError as exc:
            raise InputError(self.path, f"results row {number}", not_a_row(exc)) from None

    def worst(self, method: str, count: int) -> list[tuple[ScoreRow, Workflow, Machine, SolveResult | None]]:
        """The ``count`` rows of ``method`` farthest from the optimum (gap, else gap vs lower bound).

        Only safe rows with a gap figure count (as in the aggregates).
        """
        found = self.db.execute(
            """SELECT r.rowid, r.row, i.document, m.document, f.result FROM results r
               JOIN instances i ON i.instance = r.instance JOIN machines m ON m.machine = r.machine
               LEFT JOIN refs f ON f.instance = r.instance AND f.machine = r.machine
               WHERE r.method = ? AND r.safe = 1 AND COALESCE(r.gap, r.gap_vs_lb) IS NOT NULL
               ORDER BY COALESCE(r.gap, r.gap_vs_lb) DESC, r.rowid LIMIT ?""",
            (method, count),
        )
        return [
            (
                self._row(number, row),
                Workflow.model_validate_json(workflow),
                Machine.model_validate_json(machine),
                None if ref is None else SolveResult.model_validate_json(ref),
            )
            for number, row, workflow, machine, ref in found
        ]

    def answered(self) -> list[tuple[Workflow, Machine, SolveResult | None]]:
        """Every workflow × machine the results answer, in suite order, with its reference (if any)."""
        found = self.db.execute(
            """SELECT i.document, m.document, f.result FROM
               (SELECT DISTINCT instance, machine FROM results) r
               JOIN instances i ON i.instance = r.instance JOIN machines m ON m.machine = r.machine
               LEFT JOIN refs f ON f.instance = r.instance AND f.machine = r.machine
               ORDER BY i.rowid, m.rowid"""
        )
        return [
            (
                Workflow.model_validate_json(workflow),
                Machine.model_validate_json(machine),
                None if ref is None else SolveResult.model_validate_json(ref),
            )
            for workflow, machine, ref in found
        ]

    def read_bounds(self, keys: Iterable[str]) -> dict[str, tuple[Any, ...]]:
        """The ``bounds`` rows of these keys present, by key (the other columns, in table order)."""
        if "bounds" not in {n for (n,) in self.db.execute("SELECT name FROM sqlite_master")}:
            return {}  # a store read-only that no run with --noise has written to
        wanted = list(dict.fromkeys(keys))
        found: dict[str, tuple[Any, ...]] = {}
        for i in range(0, len(wanted), _BATCH):
            part = wanted[i : i + _BATCH]
            marks = ", ".join("?" * len(part))
            for key, *rest in self.db.execute(f"SELECT * FROM bounds WHERE key IN ({marks})", part):
                found[key] = tuple(rest)
        return found

    def write_bounds(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """``bounds`` rows (key first, then the other columns in table order), in one transaction."""
        marks = ", ".join("?" * len(OPTIONAL_COLUMNS["bounds"]))
        with transaction(self.db, self.path):
            self.db.executemany(f"INSERT OR REPLACE INTO bounds VALUES ({marks})", rows)

    def methods(self) -> list[str]:
        """Methods present, in order of first appearance."""
        return [
            m for (m,) in self.db.execute("SELECT method FROM results GROUP BY method ORDER BY MIN(rowid)")
        ]

    def made(self) -> StoreFacts:
        """What the store records of its making (for a report's provenance)."""
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        instances = [i for (i,) in self.db.execute("SELECT instance FROM instances ORDER BY instance")]
        machines = [m for (m,) in self.db.execute("SELECT machine FROM machines ORDER BY machine")]
        (finished,) = self.db.execute("SELECT MAX(finished) FROM results").fetchone()
        # schema 1 kept no code
        query = (
            "SELECT DISTINCT code FROM results ORDER BY code" if self.schema != "1" else "SELECT '' LIMIT 0"
        )
        codes = [c for (c,) in self.db.execute(query)]
        params = [
            json.loads(p) for (p,) in self.db.execute("SELECT DISTINCT params FROM results ORDER BY params")
        ]
        inputs = hashlib.sha256("\n".join([*instances, "", *machines]).encode()).hexdigest()[:32]
        return StoreFacts(
            len(instances),
            len(machines),
            inputs,
            None if finished is None else float(finished),
            tuple(codes),
            tuple(p for p in params if isinstance(p, dict)),
            meta.get("peakopt"),
        )

    def count(self) -> int:
        """Result rows present."""
        (n,) = self.db.execute("SELECT COUNT(*) FROM results").fetchone()
        return int(n)


#: Keys per ``IN (...)`` query: below SQLite's limit on host parameters.
_BATCH = 500


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


#: Columns named, so that the order of the table's columns does not matter.
_INSERT_RESULT = (
    f"INSERT OR REPLACE INTO results ({', '.join(COLUMNS['results'])}) "
    f"VALUES ({', '.join('?' * len(COLUMNS['results']))})"
)


def _columns(result: Result, now: float) -> tuple[Any, ...]:
    row, ref = result.row, result.reference
    return (
        *result.key,
        result.code,
        row.workflow,
        row.machine,
        row.tier,
        int(row.valid),
        int(row.safe),
        row.makespan,
        row.cva,
        row.avoidable_cva,
        row.strict_mru,
        row.safe_mru,
        row.gap,
        row.gap_vs_lb,
        row.gap_vs_ub,
        None if ref is None else ref.status,
        None if ref is None else ref.makespan,
        None if ref is None else ref.lower_bound,
        result.seconds,
        result.error,
        row.model_dump_json(),
        now,
    )


def read_score_rows(path: str | Path) -> list[ScoreRow]:
    """Every result row of a store as :class:`~peakopt.oracle.tables.rows.ScoreRow` (``source`` = method).

    The file is opened read-only and never written (see :class:`Store`).

    Raises
    ------
    InputError
        When the file does not exist or is not a results store.
    """
    store = Store(path, read_only=True)
    try:
        return store.score_rows()
    finally:
        store.close()
