"""What a command runs on: every workflow of the inputs, with its machine profiles.

``schedule``, ``solve``, ``stress`` and ``plot`` all read their inputs this
way: each file on its own (PSPLIB files all name their machine ``psplib``,
with different capacities; a directory is its input files, each read on its
own), each workflow on its own file's machines unless ``--machine`` names
others. ``score``, ``plan-score`` and ``prompt`` judge each workflow on its
own file's machines plus those that mean one capacity in every input
(:class:`Scopes`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from peakopt.cli.common import input_files, unconstrained, warn
from peakopt.instances.errors import InputError
from peakopt.instances.paths import BUNDLED_PREFIX

if TYPE_CHECKING:
    from peakopt.models import Machine, Suite, Workflow

#: A workflow and the machines to run it on.
Target = tuple["Workflow", list["Machine"]]  # names: the models load when the inputs are read


def read_files(paths: Iterable[str], read: dict[str, Any]) -> list[tuple[str, Suite]]:
    """Each input file (each file of a directory) with its own suite (``read``: arguments of ``load``).

    Raises
    ------
    InputError
        When two inputs hold a workflow of the same id.
    """
    from peakopt.instances.loader import load  # the readers: pydantic and the models, not for --help

    found = [(path, load(path, **read)) for path in input_files(paths)]
    seen: dict[str, str] = {}
    for path, suite in found:
        for workflow in suite.workflows:
            if workflow.id in seen:
                also = f" (also in {seen[workflow.id]})"
                raise InputError(
                    path, f"workflow {workflow.id!r}", "duplicate workflow id across the inputs" + also
                )
            seen[workflow.id] = path
    return found


def read_each(paths: tuple[str, ...], read: dict[str, Any]) -> list[Suite]:
    """Each input file's suite, in order (see :func:`read_files`)."""
    return [suite for _, suite in read_files(paths, read)]


def agreed(inputs: Iterable[Suite]) -> tuple[dict[str, Machine], set[str]]:
    """Machines by name whose name means one capacity in every input, and the names that do not."""
    by_name: dict[str, Machine] = {}
    ambiguous: set[str] = set()
    for suite in inputs:
        for machine in suite.machines:
            known = by_name.setdefault(machine.name, machine)
            if known.capacity != machine.capacity:
                ambiguous.add(machine.name)
    return {n: m for n, m in by_name.items() if n not in ambiguous}, ambiguous


def _by_name(ref: str, own: Suite, inputs: list[Suite]) -> Machine | None:
    """The machine called ``ref``: this input's, else the one capacity all inputs agree on."""
    for machine in own.machines:
        if machine.name == ref:
            return machine
    found, ambiguous = agreed(inputs)
    if ref in ambiguous:
        raise click.BadParameter(
            f"machine {ref!r} has different capacities in different inputs", param_hint="'--machine'"
        )
    return found.get(ref)


class Scopes:
    """Each input file's workflows with the machines they are judged on.

    A file's own machines, then every other machine whose name means one
    capacity in all the inputs: for inputs that agree this is the merged
    suite, and a folder of PSPLIB files (each its own ``psplib``) still works.

    Parameters
    ----------
    files
        (path, suite) per input file, in order, each suite with the machines of its scope.
    """

    def __init__(self, files: Iterable[tuple[str, Suite]]) -> None:
        self.files = tuple(files)
        self.suites = tuple(suite for _, suite in self.files)
        self._index = {w.id: k for k, suite in enumerate(self.suites) for w in suite.workflows}

    @classmethod
    def read(cls, paths: Iterable[str], fmt: str | None, cpu: str, keep_dummies: bool) -> Scopes:
        """The scopes of the input files of ``paths`` (directories expanded)."""
        from peakopt.models import Suite

        inputs = read_files(paths, {"format": fmt, "cpu": cpu, "keep_dummies": keep_dummies})
        found, _ = agreed(suite for _, suite in inputs)
        files = []
        for path, suite in inputs:
            own = {m.name: m for m in suite.machines}
            machines = {**own, **{n: m for n, m in found.items() if n not in own}}
            scope = Suite(machines=tuple(machines.values()), workflows=suite.workflows, meta=suite.meta)
            files.append((path, scope))
        return cls(files)

    def of(self, record: Mapping[str, Any] | None) -> Suite:
        """The suite a record is judged against: the scope of the file holding its workflow."""
        name = record.get("workflow") if record else None
        # an unknown workflow is judged against any scope, and the oracle says it is unknown
        return self.suites[self._index.get(name, 0) if isinstance(name, str) else 0]


def pick_machines(
    refs: tuple[str, ...],
    own: Suite,
    inputs: list[Suite],
    files: dict[str, tuple[Machine, ...]] | None = None,
) -> list[Machine]:
    """The machines for ``own``'s workflows: each ``--machine`` ref (a name or a file), else its own.

    ``files`` keeps the machine files already read, so that each is read once
    (it may be a pipe) however many inputs there are.
    """
    files = {} if files is None else files
    if not refs:
        return list(own.machines)
    chosen: dict[str, Machine] = {}
    for ref in refs:
        machine = _by_name(ref, own, inputs)
        if machine is not None:
            chosen[machine.name] = machine
        elif ref.startswith(BUNDLED_PREFIX) or (os.path.lexists(ref) and not Path(ref).is_dir()):
            if ref not in files:
                from peakopt.instances.machine_files import load_machines

                files[ref] = load_machines(ref)  # a symlink loop is read, and refused in words
            chosen.update((m.name, m) for m in files[ref])
        else:
            known = ", ".join(sorted({m.name for s in inputs for m in s.machines})) or "none"
            raise click.BadParameter(
                f"{ref!r} is neither a machine of the inputs (they define: {known}) nor a file",
                param_hint="'--machine'",
            )
    return list(chosen.values())


def targets(
    paths: tuple[str, ...], refs: tuple[str, ...], read: dict[str, Any], *, need_machine: bool = True
) -> list[Target]:
    """Every workflow of the inputs with its machines; warns once per unconstrained resource.

    Raises
    ------
    InputError
        When ``need_machine`` and an input has no machine and none is named.
    """
    from peakopt.models import Suite

    files = read_files(paths, read)
    inputs = [suite for _, suite in files]
    found: list[Target] = []
    notes: dict[str, None] = {}
    machine_files: dict[str, tuple[Machine, ...]] = {}
    for path, suite in files:
        machines = pick_machines(refs, suite, inputs, machine_files)
        if need_machine and not machines:
            raise InputError(path, "", "has no machine profile; name one with --machine NAME|FILE")
        notes.update(dict.fromkeys(unconstrained(Suite(machines=tuple(machines), workflows=suite.workflows))))
        found.extend((workflow, machines) for workflow in suite.workflows)
    for note in notes:
        warn(note)
    return found


def choose(found: list[tuple[Workflow, list[Machine]]], workflow_id: str | None) -> tuple[Workflow, Machine]:
    """The one workflow × machine to draw.

    Raises
    ------
    click.UsageError
        When the inputs hold several and the options do not pick one.
    """
    if workflow_id is not None:
        found = [pair for pair in found if pair[0].id == workflow_id]
        if not found:
            raise click.BadParameter(f"no workflow {workflow_id!r} in the inputs", param_hint="'--workflow'")
    if len(found) > 1:
        ids = ", ".join(w.id for w, _ in found[:8]) + (", ..." if len(found) > 8 else "")
        raise click.UsageError(f"the inputs hold {len(found)} workflows ({ids}); pick one with --workflow ID")
    workflow, machines = found[0]
    if len(machines) > 1:
        names = ", ".join(m.name for m in machines)
        raise click.UsageError(
            f"{workflow.id!r} has several machines ({names}); pick one with --machine NAME"
        )
    return workflow, machines[0]
