"""What a command runs on: every workflow of the inputs, with its machine profiles.

``schedule``, ``solve``, ``stress`` and ``plot`` all read their inputs this
way: each file on its own (PSPLIB files all name their machine ``psplib``,
with different capacities), each workflow on its own file's machines unless
``--machine`` names others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from peakopt.cli.common import unconstrained, warn
from peakopt.instances import BUNDLED_PREFIX, InputError, load
from peakopt.instances.machine_files import load_machines
from peakopt.models import Machine, Suite, Workflow

#: A workflow and the machines to run it on.
Target = tuple[Workflow, list[Machine]]


def read_each(paths: tuple[str, ...], read: dict[str, Any]) -> list[Suite]:
    """Each input as its own suite (``read``: keyword arguments of ``load``).

    Raises
    ------
    InputError
        When two inputs hold a workflow of the same id.
    """
    suites = [load(path, **read) for path in paths]
    seen: set[str] = set()
    for path, suite in zip(paths, suites, strict=True):
        for workflow in suite.workflows:
            if workflow.id in seen:
                raise InputError(path, f"workflow {workflow.id!r}", "duplicate workflow id across the inputs")
            seen.add(workflow.id)
    return suites


def _by_name(ref: str, own: Suite, inputs: list[Suite]) -> Machine | None:
    """The machine called ``ref``: this input's, else the one capacity all inputs agree on."""
    for machine in own.machines:
        if machine.name == ref:
            return machine
    found = {tuple(sorted(m.capacity.items())): m for s in inputs for m in s.machines if m.name == ref}
    if len(found) > 1:
        raise click.BadParameter(
            f"machine {ref!r} has different capacities in different inputs", param_hint="'--machine'"
        )
    return next(iter(found.values()), None)


def pick_machines(refs: tuple[str, ...], own: Suite, inputs: list[Suite]) -> list[Machine]:
    """The machines for ``own``'s workflows: each ``--machine`` ref (a name or a file), else its own."""
    if not refs:
        return list(own.machines)
    chosen: dict[str, Machine] = {}
    for ref in refs:
        machine = _by_name(ref, own, inputs)
        if machine is not None:
            chosen[machine.name] = machine
        elif ref.startswith(BUNDLED_PREFIX) or Path(ref).is_file():
            chosen.update((m.name, m) for m in load_machines(ref))
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
    inputs = read_each(paths, read)
    found: list[Target] = []
    notes: dict[str, None] = {}
    for path, suite in zip(paths, inputs, strict=True):
        machines = pick_machines(refs, suite, inputs)
        if need_machine and not machines:
            raise InputError(path, "", "has no machine profile; name one with --machine NAME|FILE")
        notes.update(dict.fromkeys(unconstrained(Suite(machines=tuple(machines), workflows=suite.workflows))))
        found.extend((workflow, machines) for workflow in suite.workflows)
    for note in notes:
        warn(note)
    return found
