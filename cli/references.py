"""Reference files as every command reads them: each line checked before any gap is computed."""

from __future__ import annotations

from collections.abc import Iterable

from peakopt.instances.records import reference_lines
from peakopt.models import Machine, Workflow
from peakopt.oracle.references import Checked, check_references


def load_references(path: str | None, workflows: Iterable[Workflow], machines: Iterable[Machine]) -> Checked:
    """The references of ``path`` (none without one), checked against the inputs they are used for.

    Raises
    ------
    peakopt.instances.InputError
        When a line is not a reference result.
    peakopt.oracle.references.ReferenceError
        When a reference contradicts itself or the inputs (another workflow
        under the same id, a makespan its starts do not give...).
    """
    if not path:
        return {}
    return check_references(path, reference_lines(path), workflows, machines)
