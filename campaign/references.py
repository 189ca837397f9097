"""Reference results by workflow × machine, wherever they are kept: one interface, three homes.

``peakopt solve`` writes its references through :class:`ReferenceStore` and ``peakopt stress``
reads (and adds) them through the same interface:

- :class:`~peakopt.campaign.jsonl.JsonLinesReferences`: the JSON Lines file ``solve -o``
  writes, streamed to ``NAME.partial`` and moved over ``NAME`` at the end; keyed by workflow
  id and machine name, as the file names them;
- :class:`StoreReferences`: the ``refs`` table of a results store, keyed by the content
  hashes of the workflow and machine (another workflow under the same id is another key);
- :class:`ReferenceFile`: a references file read to be reused (``stress --reference``), each
  line checked against itself and the inputs it is used for before any of it is used.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from pathlib import Path

from peakopt.campaign.store import Store
from peakopt.instances.records import reference_lines
from peakopt.models import Machine, SolveResult, Workflow, content_hash
from peakopt.oracle import check_references

#: How a home names one workflow × machine.
PairKey = tuple[str, str]


class References(ABC):
    """Reference results to look up by workflow × machine."""

    @abstractmethod
    def key(self, workflow: Workflow, machine: Machine) -> PairKey:
        """How this home names the pair."""

    @abstractmethod
    def known(self) -> Mapping[PairKey, SolveResult]:
        """Every reference held, by :meth:`key`."""

    def get(self, workflow: Workflow, machine: Machine) -> SolveResult | None:
        """The reference of the pair; None when there is none."""
        return self.known().get(self.key(workflow, machine))

    def has(self, workflow: Workflow, machine: Machine) -> bool:
        """Whether the pair has a reference (a resumed run does not solve it again)."""
        return self.key(workflow, machine) in self.known()

    def __len__(self) -> int:
        return len(self.known())

    def close(self) -> None:  # noqa: B027 (most homes hold nothing open)
        """Let go of the home; whatever was added stays."""


class ReferenceStore(References):
    """References a run adds to, each as soon as it is solved (a killed run keeps them)."""

    @abstractmethod
    def add(self, workflow: Workflow, machine: Machine, result: SolveResult) -> None:
        """Keep the pair's reference, replacing any before it."""

    def finish(self) -> None:
        """The run has ended: make what was added final (by default it already is), and close."""
        self.close()


class StoreReferences(ReferenceStore):
    """The ``refs`` table of an open results store, by content hash.

    Parameters
    ----------
    store
        The store; it stays the caller's to close. Its table is read when first looked up.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._known: dict[PairKey, SolveResult] | None = None
        # each workflow's hash once (hashing a large workflow takes a while); the model is kept
        # with it, so that its id() is not reused by another one meanwhile
        self._hashes: dict[int, tuple[Workflow | Machine, str]] = {}

    def _hash(self, model: Workflow | Machine) -> str:
        found = self._hashes.get(id(model))
        if found is None:
            found = self._hashes[id(model)] = (model, content_hash(model))
        return found[1]

    def key(self, workflow: Workflow, machine: Machine) -> PairKey:
        """The content hashes of the workflow and the machine."""
        return self._hash(workflow), self._hash(machine)

    def known(self) -> Mapping[PairKey, SolveResult]:
        """The references of the store, read once, and those added since."""
        if self._known is None:
            self._known = self.store.references()
        return self._known

    def add(self, workflow: Workflow, machine: Machine, result: SolveResult) -> None:
        """Write the reference in one transaction."""
        instance, key = self.key(workflow, machine)
        self.store.write([(instance, key, result)], [])
        if self._known is not None:
            self._known[instance, key] = result


class ReferenceFile(References):
    """A references file (``peakopt solve -o``) read to be reused, checked before use.

    Parameters
    ----------
    path
        The JSON Lines file.
    pairs
        The workflow × machine pairs it is used for: their lines are checked against them
        (see :func:`peakopt.oracle.check_references`).

    Raises
    ------
    peakopt.instances.InputError
        When a line is not a reference result, or the file is missing or empty.
    peakopt.oracle.InvalidReference
        When a reference contradicts itself or the inputs.
    """

    def __init__(self, path: str | Path, pairs: Iterable[tuple[Workflow, Machine]]) -> None:
        self.path = path
        self._known = {
            (workflow, machine or ""): result
            for (workflow, machine), result in check_references(path, reference_lines(path), pairs).items()
        }

    def key(self, workflow: Workflow, machine: Machine) -> PairKey:
        """The workflow id and the machine name, as the file names them."""
        return workflow.id, machine.name

    def known(self) -> Mapping[PairKey, SolveResult]:
        """Every reference of the file, by workflow id and machine name."""
        return self._known
