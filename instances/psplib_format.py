"""PSPLIB ``.sm`` and Patterson ``.rcp`` files, read with the ``psplib`` package.

Jobs keep their PSPLIB numbers as task ids (``"2"`` ... ``"31"`` in j30);
resources are named ``R1``, ``R2``, ... The dummy source and sink (the first
and last job, zero duration and demand) are dropped unless
``keep_dummies=True``, which keeps them as zero-duration tasks. The workflow
id is the file name without its extension; the capacities become a machine
named ``psplib``.
"""

from __future__ import annotations

import re
from pathlib import Path

import psplib
from pydantic import ValidationError

from peakopt.instances.errors import InputError, from_validation
from peakopt.models import Machine, Suite, Workflow

MACHINE = "psplib"


def read_sm(path: str | Path, *, keep_dummies: bool = False) -> Suite:
    """Read a single-mode PSPLIB ``.sm`` file.

    Raises
    ------
    InputError
        On a truncated or malformed file, or a job count that disagrees
        with the header.
    """
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        instance = psplib.parse(path, instance_format="psplib")
    except Exception as exc:  # the parser raises whatever it trips on
        raise InputError(path, "", f"truncated or malformed PSPLIB file ({exc})") from None
    declared = re.search(r"jobs \(incl\. supersource/sink \)\s*:\s*(\d+)", text)
    if declared and int(declared.group(1)) != len(instance.activities):
        raise InputError(
            path,
            "jobs",
            f"header declares {declared.group(1)} jobs but the file holds {len(instance.activities)}",
        )
    return _suite(path, instance, keep_dummies)


def read_rcp(path: str | Path, *, keep_dummies: bool = False) -> Suite:
    """Read a Patterson ``.rcp`` file.

    Raises
    ------
    InputError
        On a truncated file or one whose job count disagrees with its data.
    """
    try:
        instance = psplib.parse(path, instance_format="patterson")
    except StopIteration:
        raise InputError(path, "jobs", "the file ends before all declared jobs are given") from None
    except Exception as exc:
        raise InputError(path, "", f"malformed Patterson file ({exc})") from None
    values = Path(path).read_text(encoding="utf-8", errors="replace").split()
    used = 2 + len(instance.resources)
    used += sum(2 + len(instance.resources) + len(a.successors) for a in instance.activities)
    if len(values) != used:
        raise InputError(
            path,
            "jobs",
            f"header declares {len(instance.activities)} jobs but {len(values) - used} values follow them",
        )
    return _suite(path, instance, keep_dummies)


def _suite(path: str | Path, instance: psplib.ProjectInstance, keep_dummies: bool) -> Suite:
    activities = instance.activities
    count = len(activities)
    names = [f"R{k + 1}" for k in range(len(instance.resources))]
    dummies = set() if keep_dummies else {0, count - 1}
    preds: dict[int, list[str]] = {j: [] for j in range(count)}
    for job, activity in enumerate(activities):
        if len(activity.modes) != 1:
            raise InputError(path, f"job {job + 1}", "has several modes; only single-mode RCPSP is supported")
        for succ in activity.successors:
            if not 0 <= succ < count:
                raise InputError(path, f"job {job + 1}", f"names successor {succ + 1}, which does not exist")
            if job not in dummies:
                preds[succ].append(str(job + 1))
    tasks = []
    for job, activity in enumerate(activities):
        if job in dummies:
            mode = activity.modes[0]
            if mode.duration or any(mode.demands):
                raise InputError(
                    path, f"job {job + 1}", "the dummy source/sink must have zero duration and demand"
                )
            continue
        mode = activity.modes[0]
        demand = {name: float(d) for name, d in zip(names, mode.demands, strict=True) if d}
        tasks.append(
            {"id": str(job + 1), "depends_on": preds[job], "duration": mode.duration, "demand": demand}
        )
    raw = {"id": Path(path).stem, "tasks": tasks, "meta": {"format": Path(path).suffix.lstrip(".")}}
    capacity = {name: float(r.capacity) for name, r in zip(names, instance.resources, strict=True)}
    try:
        workflow = Workflow.model_validate(raw)
        machine = Machine(name=MACHINE, capacity=capacity)
    except ValidationError as exc:
        raise from_validation(path, exc, raw) from None
    return Suite(machines=(machine,), workflows=(workflow,))
