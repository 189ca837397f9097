"""Measured use against declarations: which resources a step or call used more of than it declared.

Admission trusts declarations: the guard holds each step's declared peak, so a step that uses
more than it declared can overflow the machine while every admitted set "fits". With measurement
on, the controller (``peakopt run --measure``) and the governor (``release(usage=...)``) compare
what was measured with what was declared, per resource, and report each excess at once:

- the controller compares memory while the step runs (its sampled peak so far, at every sample:
  the warning comes as soon as the step is seen above its declaration) and its average cores
  when it ends (a rate is known only then), each excess once per step and resource;
- the governor compares the usage a release reports, when it is reported.

The measured figures are those ``peakopt score --demand measured`` judges (:func:`measured_demand`):
peak memory as ``memory_mb``, average cores as ``cpu``, rounded up to a tenth of a MiB and a
thousandth of a core. An excess is any amount above the declared
peak (no margin: a step that declared nothing of a resource and used some has used more).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from peakopt.models import Task
from peakopt.oracle.base.exact import fraction

if TYPE_CHECKING:  # the trace imports this module
    from peakopt.runtime.trace import StepUsage


class OverDeclared(UserWarning):
    """A call was measured to use more than the demand it was admitted with (the guard trusted less)."""


@dataclass(frozen=True)
class Excess:
    """One resource a step used more of than it declared: ``measured`` against ``declared``."""

    resource: str
    declared: float
    measured: float


#: Decimal places measured figures are judged at, rounded up: a tenth of a MiB, a thousandth of a core.
MEMORY_PLACES, CPU_PLACES = 1, 3


def rounded_up(x: float, places: int) -> float:
    """``x`` rounded up to ``places`` decimals, exactly (on its shortest decimal: 0.3 stays 0.3)."""
    scale = 10**places
    return float(Fraction(math.ceil(fraction(x) * scale), scale))


def measured_demand(usage: StepUsage) -> dict[str, float]:
    """A step's measured usage as a demand: its peak memory (``memory_mb``) and average cores (``cpu``).

    Rounded up to :data:`MEMORY_PLACES` and :data:`CPU_PLACES` decimals, the precision
    ``peakopt run --measure`` records them at: a sampler knows no more, and a governor's tools
    report resident memory in pages (MiB with eight decimals) and cores as psutil gives them,
    whose digits would make the hindsight optimum's integer scaling inexact (capacity × horizon
    past CP-SAT's int64 energies) and so leave it unproven.
    """
    return {
        "cpu": rounded_up(usage.cpu_avg, CPU_PLACES),
        "memory_mb": rounded_up(usage.memory_peak_mb, MEMORY_PLACES),
    }


def declared_peaks(task: Task) -> dict[str, float]:
    """Resource -> the task's declared peak demand (over its segments)."""
    return {r: task.peak(r) for s in task.segments for r in s.demand}


def excesses(
    declared: Mapping[str, float], used: Mapping[str, float], resources: Collection[str] | None = None
) -> list[Excess]:
    """The resources of ``used`` above ``declared`` (a resource not declared is declared 0), by name.

    Parameters
    ----------
    declared, used
        Resource -> amount.
    resources
        Only these count (the machine's: a resource it does not constrain cannot overflow it);
        None: every resource of ``used``.
    """
    return [
        Excess(r, declared.get(r, 0.0), v)
        for r, v in sorted(used.items())
        if (resources is None or r in resources) and v > declared.get(r, 0.0)
    ]


def overuse_message(who: str, found: list[Excess], when: str = "") -> str:
    """One line naming ``who`` (``step 'a'``, ``call 'embed'``) and each excess, declared vs measured."""
    listed = ", ".join(f"{e.resource} {e.measured:g} measured against {e.declared:g} declared" for e in found)
    return f"{who} used more than it declared: {listed}{f' ({when})' if when else ''}"


def warn_overuse(who: str, found: list[Excess], *, stacklevel: int = 3) -> None:
    """Warn (:class:`OverDeclared`) about ``found``, if any (the library's default report)."""
    if found:
        warnings.warn(overuse_message(who, found), OverDeclared, stacklevel=stacklevel)


class OveruseWatch:
    """Each step's excesses, reported once per step and resource as they are seen (the controller's).

    Parameters
    ----------
    tasks
        The workflow's tasks, by id: their declared peaks.
    resources
        The resources the machine constrains (the others are not compared).
    report
        Called with one line per new excess of a step; None: an :class:`OverDeclared` warning.
    """

    def __init__(
        self,
        tasks: Mapping[str, Task],
        resources: Collection[str],
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.declared = {i: declared_peaks(t) for i, t in tasks.items()}
        self.resources = frozenset(resources)
        self.report = report
        self.seen: dict[str, set[str]] = {}

    def check(self, step: str, used: Mapping[str, float], when: str = "") -> list[Excess]:
        """Report the excesses of ``used`` not yet reported for ``step``; those newly reported."""
        told = self.seen.setdefault(step, set())
        found = [e for e in excesses(self.declared[step], used, self.resources) if e.resource not in told]
        if found:
            told.update(e.resource for e in found)
            line = overuse_message(f"step {step!r}", found, when)
            if self.report is not None:
                self.report(line)
            else:
                warnings.warn(line, OverDeclared, stacklevel=2)
        return found
