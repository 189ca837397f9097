"""Where a report's figures come from: per input, the suite, setting, seeds, counts, code and date.

A table in a paper is only as good as what it says about its making. Each input of
``peakopt report`` (a results store, a scores file, an Inspect log) gives a :class:`Provenance`:
what was judged (the suite by name and content hash, the setting and split), how (seeds, sample
and pair counts, epochs, the task's arguments), by whom (the models or methods) and with what code
(peakopt's version and the oracle's identity, :func:`oracle_identity`), when. What an input does
not record is said as such (None, shown as ``not recorded``), never guessed.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peakopt.models import Suite, content_hash
from peakopt.oracle import ScoreRow
from peakopt.solver.heuristics import package_code

#: How a field an input does not record is shown.
UNRECORDED = "not recorded"


def peakopt_version() -> str:
    """The installed peakopt's version."""
    return importlib.metadata.version("peakopt")


def oracle_identity() -> str:
    """The judging code's identity: the digest of the oracle's sources.

    The same digest marks a stress store's rows (``oracle:<digest>`` in their code,
    :func:`peakopt.campaign.stress.row_code`), so a report can say whether its inputs were judged
    by the code that reads them.
    """
    import peakopt.oracle  # noqa: F401 - the digest reads the package's folder from sys.modules

    return package_code("peakopt.oracle")


def suite_identity(suite: Suite) -> str:
    """A suite's content hash (the name of its reference cache file, :mod:`peakopt.evals.references`)."""
    return content_hash(suite)


def iso_time(seconds: float) -> str:
    """A Unix time as an ISO 8601 UTC time to the second."""
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Provenance:
    """What one input of a report says about its making (None: not recorded in it).

    Attributes
    ----------
    path
        The input as given.
    kind
        ``Inspect log``, ``results store`` or ``scores file``.
    rows
        The score rows read from it.
    pairs
        The workflow × machine pairs they answer.
    sources
        The models (a log) or methods (a store, a scores file), in order of appearance.
    suite, suite_hash
        The suite by name (as the task was given it) and by content hash.
    settings, splits
        The prompt settings (``rasc``, ``no-profile``) and splits of the rows.
    seeds
        The seeds that drew what was judged: the task's shuffle seed, the scenario seeds of
        sampled rows, the methods' seeds of a store.
    epochs
        How many times each sample was run (a log).
    task, arguments
        The Inspect task with its version, and its arguments (a log).
    command
        The ``inspect eval`` command that runs the log's evaluation again (a log).
    created
        When it was made (ISO 8601, UTC): the log's start, the store's last result, the
        file's modification time.
    peakopt, oracle
        peakopt's version and the oracle's identity that judged the rows.
    """

    path: str
    kind: str
    rows: int
    pairs: int
    sources: tuple[str, ...]
    suite: str | None = None
    suite_hash: str | None = None
    settings: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    seeds: tuple[str, ...] = ()
    epochs: int | None = None
    task: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    command: str | None = None
    created: str | None = None
    peakopt: str | None = None
    oracle: str | None = None

    def fields(self) -> dict[str, str]:
        """The provenance as labelled text, in the order a report shows it."""

        def listed(values: Sequence[str]) -> str:
            return ", ".join(values) if values else UNRECORDED

        suite = self.suite or UNRECORDED
        if self.suite_hash:
            suite += f" ({self.suite_hash})"
        shown = {
            "input": self.path,
            "kind": self.kind,
            "sources": listed(self.sources),
            "suite": suite,
            "setting": listed(self.settings),
            "split": listed(self.splits),
            "seeds": listed(self.seeds),
            "rows": str(self.rows),
            "pairs": str(self.pairs),
        }
        if self.epochs is not None:
            shown["epochs"] = str(self.epochs)
        if self.task is not None:
            shown["task"] = self.task
            shown["arguments"] = json.dumps(dict(self.arguments), sort_keys=True, default=str)
        if self.command is not None:
            shown["command"] = self.command
        shown |= {
            "created": self.created or UNRECORDED,
            "peakopt": self.peakopt or UNRECORDED,
            "oracle": self.oracle or UNRECORDED,
        }
        return shown

    def data(self) -> dict[str, Any]:
        """Every field as JSON-ready data (``report --json``): lists for tuples, None where not recorded."""
        found = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return (
            found
            | {name: list(value) for name, value in found.items() if isinstance(value, tuple)}
            | {"arguments": dict(self.arguments)}
        )


def row_facts(rows: Iterable[ScoreRow]) -> dict[str, Any]:
    """What the rows themselves say: their count, pairs, sources, settings and scenario seeds."""
    found = list(rows)
    seeds = {f"scenarios {r.monte_carlo.seed}" for r in found if r.monte_carlo is not None}
    return {
        "rows": len(found),
        "pairs": len({(r.workflow, r.machine) for r in found}),
        "sources": tuple(dict.fromkeys(r.source or "-" for r in found)),
        "settings": tuple(sorted({r.setting for r in found if r.setting})),
        "seeds": tuple(sorted(seeds)),
    }


def scores_provenance(
    path: str, rows: Sequence[ScoreRow], suites: Sequence[tuple[str, Suite]] = ()
) -> Provenance:
    """A scores file's provenance: what its rows say, the ``--suite`` inputs given, its time.

    A scores file records neither the suite nor the code that scored it: the suites are those
    the report was given to draw it with (if any), the code is not recorded.
    """
    facts = row_facts(rows)
    named = ", ".join(name for name, _ in suites) or None
    hashes = ", ".join(suite_identity(suite) for _, suite in suites) or None
    created = iso_time(Path(path).stat().st_mtime)
    return Provenance(path, "scores file", suite=named, suite_hash=hashes, created=created, **facts)


def store_provenance(path: str, rows: Sequence[ScoreRow]) -> Provenance:
    """A results store's provenance: its inputs' digest, its methods' seeds and code, its last write.

    A store holds workflows and machines, not the suite they came from: its "suite" is their
    count, and its hash the digest of their content hashes (:meth:`~peakopt.campaign.store.Store.made`).
    """
    from peakopt.campaign.store import Store

    store = Store(path, read_only=True)
    try:
        made = store.made()
    finally:
        store.close()
    facts = row_facts(rows)
    seeds = {f"{key} {value}" for params in made.params for key, value in params.items() if "seed" in key}
    oracles = sorted(
        {
            part.removeprefix("oracle:")
            for code in made.codes
            for part in code.split()
            if part.startswith("oracle:")
        }
    )
    return Provenance(
        path,
        "results store",
        suite=f"{made.workflows} workflows × {made.machines} machines",
        suite_hash=made.inputs,
        created=None if made.finished is None else iso_time(made.finished),
        peakopt=made.peakopt,
        oracle=", ".join(oracles) or None,
        **(facts | {"seeds": tuple(sorted(seeds | set(facts["seeds"])))}),
    )


def report_facts(inputs: Sequence[Provenance], split: str = "all") -> dict[str, str]:
    """The report's own provenance: when and by which peakopt and oracle it was made, of what, which split."""
    suites = dict.fromkeys(
        p.suite + (f" ({p.suite_hash})" if p.suite_hash else "") for p in inputs if p.suite
    )
    return {
        "made": iso_time(datetime.datetime.now(tz=datetime.UTC).timestamp()),
        "peakopt": peakopt_version(),
        "oracle": oracle_identity(),
        "suites": ", ".join(suites) or UNRECORDED,
        "split": split,
        "inputs": str(len(inputs)),
    }


def other_oracles(inputs: Sequence[Provenance]) -> list[Provenance]:
    """The inputs judged by another oracle than the one reading them (of those that record it)."""
    own = oracle_identity()
    return [p for p in inputs if p.oracle is not None and own not in p.oracle.split(", ")]
