"""Nothing swallowed: an exception in any search thread of the CP-SAT backend reaches solve()'s caller.

Each phase that runs on a thread of its own (the genetic algorithm beside CP-SAT, the provers and
LNS side by side) and the optimiser on the calling thread are made to raise; solve() must raise
that exception, not return as if the phase had found nothing (before, the thread printed the
traceback and the solve went on to "optimal" or "feasible").
"""

from __future__ import annotations

import importlib
import time
from dataclasses import replace

import pytest
from paths import J30, SHARED

from peakopt.instances import load
from peakopt.models import Machine, Workflow
from peakopt.solver import solve
from peakopt.solver.cpsat import CpsatOptions

search_module = importlib.import_module("peakopt.solver.search")


class PhaseFailed(Exception):
    """The fault a test puts into one phase."""


def _instance(path: str) -> tuple[Workflow, Machine]:
    suite = load(path)
    return suite.workflows[0], suite.machines[0]


#: phase -> (instance, options): an instance on which that phase runs with 2 workers
PHASES = {
    # 90 tasks: the genetic algorithm on a thread of its own for the whole search
    "genetic": (SHARED / "psplib" / "j90" / "j9013_1.sm", CpsatOptions()),
    # j30's hardest: the provers side by side after the first optimisation phase
    "destructive": (J30 / "j3029_3.sm", CpsatOptions()),
    # LNS in place of the last prover (lowered threshold so a j30 instance runs it)
    "neighbourhoods": (J30 / "j3029_3.sm", replace(CpsatOptions(), lns_from=30, genetic_from=10_000)),
    # the optimiser runs on the calling thread
    "optimise": (J30 / "j3029_3.sm", CpsatOptions()),
}


@pytest.mark.parametrize("phase", sorted(PHASES))
def test_an_exception_in_a_search_phase_reaches_the_caller(
    phase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, options = PHASES[phase]
    workflow, machine = _instance(str(path))
    calls: list[str] = []

    def broken(*args: object, **kwargs: object) -> None:
        calls.append(phase)
        raise PhaseFailed(f"the {phase} phase broke")

    monkeypatch.setattr(search_module, phase, broken)
    started = time.monotonic()
    with pytest.raises(PhaseFailed, match=f"the {phase} phase broke"):
        solve(workflow, machine, time_limit=20, workers=2, options=options)
    assert calls, f"the {phase} phase never ran: the test would prove nothing"
    # the other searches are stopped, not left to run out the limit
    assert time.monotonic() - started < 20
