"""Reference results are checked, not trusted, before any gap is computed against them.

A reference line (a :class:`~peakopt.models.SolveResult`) claims a makespan, a
lower bound and a status for a workflow on a machine. Each claim is checked,
as the oracle compares times (:func:`~peakopt.oracle.base.exact.same_time`: exactly,
on the shortest decimals, within its relative tolerance, so that seconds and
microseconds get the same verdict):

- against itself: a status ``optimal`` or ``feasible`` has a makespan;
  ``0 <= lower_bound <= makespan``; ``optimal`` only when the lower bound
  equals the makespan (or is left out);
- against the workflow and machine it is used for: the content hashes it
  carries (``workflow_hash``, ``machine_hash``) are theirs (the workflow's nominal content:
  a task's ``varies`` does not change its optimum, see :func:`~peakopt.models.nominal_hash`);
  the lower bound is at most the serial makespan (the sum of the durations, which every workflow
  attains safely); a makespan comes with starts, every task of the workflow
  has a start and no start names an unknown task; the starts are
  dependency-valid and safe (avoidable cva 0, as the oracle judges them); and
  the makespan is the one the starts give.

A reference for another workflow or machine under the same id or name is an
error, not a warning: every gap computed against it would be wrong, and a
stale references file is better regenerated than half used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from peakopt.models import Machine, PeakoptError, Schedule, SolveResult, Workflow, nominal_hash
from peakopt.oracle.base.exact import same_time
from peakopt.oracle.judge.evaluate import evaluate

#: (workflow id, machine name) -> its checked reference.
Checked = dict[tuple[str, str | None], SolveResult]


class InvalidReference(PeakoptError, ValueError):
    """A reference line that cannot be used: ``<file>: line <n>: reference for ...: <rule>``."""


def _at_most(a: float, b: float) -> bool:
    return a <= b or same_time(a, b)


def claims(result: SolveResult) -> list[str]:
    """What is wrong with a reference on its own (empty when nothing is)."""
    found = []
    makespan, lower = result.makespan, result.lower_bound
    if result.status in ("optimal", "feasible") and makespan is None:
        found.append(f"status {result.status!r} without a makespan")
    if lower is not None and lower < 0:
        found.append(f"lower_bound {lower:g} is negative")
    if makespan is not None and lower is not None:
        if not _at_most(lower, makespan):
            found.append(f"lower_bound {lower:g} is above the makespan {makespan:g}")
        if result.status == "optimal" and not same_time(lower, makespan):
            found.append(f"status 'optimal' but lower_bound {lower:g} is not the makespan {makespan:g}")
    return found


def _identity(result: SolveResult, workflow: Workflow, machine: Machine) -> list[str]:
    found = []
    for what, claimed, actual in (
        ("workflow", result.workflow_hash, nominal_hash(workflow)),
        ("machine", result.machine_hash, nominal_hash(machine)),
    ):
        if claimed is not None and claimed != actual:
            found.append(
                f"it was solved for a different {what} under the same name (content hash {claimed}, "
                f"the input's is {actual}); solve the inputs again"
            )
    return found


def _schedule(result: SolveResult, workflow: Workflow, machine: Machine) -> list[str]:
    if result.starts is None:
        return [] if result.makespan is None else [f"a makespan of {result.makespan:g} without starts"]
    unknown = sorted(set(result.starts) - workflow.index.keys())
    missing = [t.id for t in workflow.tasks if t.id not in result.starts]
    if unknown or missing:
        return [
            *(f"a start for unknown task {t!r}" for t in unknown[:1]),
            *(f"task {t!r} has no start" for t in missing[:1]),
        ]
    schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=result.starts)
    score = evaluate(workflow, machine, schedule, soft_as_hard=True)  # a reference overflows nothing
    found = [f"its starts are invalid: {reason}" for reason in score.reasons[:1]]
    if score.valid and not score.safe:
        found.append(f"its starts are unsafe (avoidable cva {score.avoidable_cva:g})")
    if result.makespan is not None and not same_time(score.makespan, result.makespan):
        found.append(f"makespan {result.makespan:g}, but its starts give {score.makespan:g}")
    return found


def check(result: SolveResult, workflow: Workflow | None = None, machine: Machine | None = None) -> list[str]:
    """Every problem of one reference (see the module docstring); empty when it can be used.

    Parameters
    ----------
    result
        The reference.
    workflow, machine
        What it is used for; without them only its own claims are checked.
    """
    found = claims(result)
    if workflow is None or machine is None:
        return found
    found += _identity(result, workflow, machine)
    serial = math.fsum(t.length for t in workflow.tasks)
    if result.lower_bound is not None and not _at_most(result.lower_bound, serial):
        found.append(f"lower_bound {result.lower_bound:g} is above the serial makespan {serial:g}")
    return found + _schedule(result, workflow, machine)


def check_references(
    path: str | Path,
    lines: Iterable[tuple[int, SolveResult]],
    pairs: Iterable[tuple[Workflow, Machine]],
) -> Checked:
    """The references of a file by (workflow, machine), each checked first.

    Every line's own claims are checked; a line whose workflow id and machine
    name are one of ``pairs`` is also checked against that workflow and
    machine (lines for other pairs are not used, and not checked further). A
    later line for a pair replaces an earlier one.

    Parameters
    ----------
    path
        The file, for the messages.
    lines
        ``(line number, result)`` pairs, as
        :func:`peakopt.instances.records.reference_lines` reads them.
    pairs
        The workflow × machine pairs the references are used for (each
        workflow with the machines of its own input: PSPLIB files all call
        theirs ``psplib``).

    Raises
    ------
    InvalidReference
        Naming the file, the line, the workflow and machine, and the first
        problem, for the first line that cannot be used.
    """
    known: dict[tuple[str, str | None], tuple[Workflow, Machine]] = {(w.id, m.name): (w, m) for w, m in pairs}
    checked: Checked = {}
    for number, result in lines:
        found = known.get((result.workflow, result.machine))
        problems = check(result, *found) if found else check(result)
        if problems:
            pair = f"reference for workflow {result.workflow!r} on machine {result.machine!r}"
            raise InvalidReference(f"{path}: line {number}: {pair}: {problems[0]}")
        checked[(result.workflow, result.machine)] = result
    return checked
