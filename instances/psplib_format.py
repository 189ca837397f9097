"""PSPLIB ``.sm`` and Patterson ``.rcp`` files, read with the ``psplib`` package.

Jobs keep their PSPLIB numbers as task ids (``"2"`` ... ``"31"`` in j30);
resources are named ``R1``, ``R2``, ... The dummy source and sink (the first
and last job, zero duration and demand) are dropped unless
``keep_dummies=True``, which keeps them as zero-duration tasks. The workflow
id is the file name without its extension; the capacities become a machine
named ``psplib``.

The readers take the text the caller has read once (the file may be a pipe)
and check what the ``psplib`` parser takes on trust: the job and resource
counts of the header against the data that follow.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import psplib
from pydantic import ValidationError

from peakopt.instances.errors import InputError, from_validation
from peakopt.models import Machine, Suite, Workflow

MACHINE = "psplib"


def _parse(text: str, kind: str) -> psplib.ProjectInstance:
    # psplib reads only from a path; give it a private copy of the text
    # already read, so that the input itself is read once
    handle, copy = tempfile.mkstemp(prefix="peakopt-", suffix=f".{kind}")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        return psplib.parse(copy, instance_format=kind)
    finally:
        Path(copy).unlink(missing_ok=True)


def _count(text: str, pattern: str) -> int | None:
    found = re.search(pattern, text)
    return int(found.group(1)) if found else None


def _lines(text: str) -> list[str]:
    """Non-blank lines, stripped: how the psplib parser sees the file."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _index(lines: list[str], mark: str) -> int | None:
    return next((i for i, line in enumerate(lines) if mark in line), None)


def _check_sm_resources(text: str, path: Path) -> None:
    """The resource counts of the header, the capacities and every request row agree."""
    for kind, pattern in (
        ("nonrenewable", r"-\s*nonrenewable\s*:\s*(\d+)"),
        ("doubly constrained", r"-\s*doubly constrained\s*:\s*(\d+)"),
    ):
        count = _count(text, pattern)
        if count:
            raise InputError(
                path,
                "resources",
                f"declares {count} {kind} resource(s); "
                "only renewable resources (per-period capacities) are supported",
            )
    lines = _lines(text)
    avail, requests = _index(lines, "AVAILABILITIES"), _index(lines, "REQUESTS/DURATIONS")
    if avail is None or requests is None or avail + 2 >= len(lines):
        return  # the parser reports the missing section
    names = [token for token in lines[avail + 1].split() if token in ("R", "N")]
    capacities = lines[avail + 2].split()
    declared = _count(text, r"-\s*renewable\s*:\s*(\d+)")
    if declared is not None and declared != len(capacities):
        raise InputError(
            path,
            "resources",
            f"header declares {declared} renewable resources "
            f"but RESOURCEAVAILABILITIES gives {len(capacities)} capacities",
        )
    if len(names) != len(capacities):
        raise InputError(
            path,
            "resources",
            f"RESOURCEAVAILABILITIES names {len(names)} resources but gives {len(capacities)} capacities",
        )
    rows = lines[requests + 3 : avail - 1]
    precedences = _index(lines, "PRECEDENCE RELATIONS")
    if precedences is None or len(rows) != len(lines[precedences + 2 : requests - 1]):
        return  # several modes (refused later) or a truncated file (the parser says so)
    expected = 3 + len(capacities)
    for row in rows:
        values = row.split()
        if len(values) != expected:
            raise InputError(
                path,
                f"job {values[0]}",
                f"its REQUESTS/DURATIONS row has {len(values)} values, expected {expected} "
                f"(job, mode, duration and {len(capacities)} demands)",
            )


def parse_sm(text: str, path: str | Path, *, keep_dummies: bool = False) -> Suite:
    """Build a suite from the text of a single-mode PSPLIB ``.sm`` file.

    Raises
    ------
    InputError
        On a truncated or malformed file, or a job or resource count that
        disagrees with the header.
    """
    source = Path(path)
    _check_sm_resources(text, source)
    try:
        instance = _parse(text, "psplib")
    except Exception as exc:  # the parser raises whatever it trips on
        raise InputError(source, "", f"truncated or malformed PSPLIB file ({exc})") from None
    declared = _count(text, r"jobs \(incl\. supersource/sink \)\s*:\s*(\d+)")
    if declared is not None and declared != len(instance.activities):
        raise InputError(
            source, "jobs", f"header declares {declared} jobs but the file holds {len(instance.activities)}"
        )
    return _suite(source, instance, keep_dummies, "sm")


def parse_rcp(text: str, path: str | Path, *, keep_dummies: bool = False) -> Suite:
    """Build a suite from the text of a Patterson ``.rcp`` file.

    Raises
    ------
    InputError
        On a truncated file, or a job or resource count that disagrees with
        the data.
    """
    source = Path(path)
    lines = _lines(text)
    header = lines[0].split() if lines else []
    if len(header) == 2 and header[1].isdigit() and int(header[1]) and len(lines) > 1:
        capacities = len(lines[1].split())
        if capacities != int(header[1]):
            raise InputError(
                source,
                "resources",
                f"header declares {header[1]} resources but the capacity line gives {capacities}",
            )
    try:
        instance = _parse(text, "patterson")
    except StopIteration:
        raise InputError(source, "jobs", "the file ends before all declared jobs are given") from None
    except Exception as exc:
        raise InputError(source, "", f"malformed Patterson file ({exc})") from None
    values = text.split()
    used = 2 + len(instance.resources)
    used += sum(2 + len(instance.resources) + len(a.successors) for a in instance.activities)
    if len(values) != used:
        raise InputError(
            source,
            "jobs",
            f"header declares {len(instance.activities)} jobs but {len(values) - used} values follow them",
        )
    return _suite(source, instance, keep_dummies, "rcp")


def _suite(path: Path, instance: psplib.ProjectInstance, keep_dummies: bool, kind: str) -> Suite:
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
    raw = {"id": path.stem, "tasks": tasks, "meta": {"format": kind}}
    capacity = {name: float(r.capacity) for name, r in zip(names, instance.resources, strict=True)}
    machine_raw = {"name": MACHINE, "capacity": capacity}
    try:
        workflow = Workflow.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(path, exc, raw) from None
    try:
        machine = Machine.model_validate(machine_raw)
    except ValidationError as exc:
        raise from_validation(path, exc, machine_raw) from None
    return Suite(machines=(machine,), workflows=(workflow,))
