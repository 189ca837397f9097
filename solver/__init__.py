"""Exact solvers (CP-SAT, MILP) and heuristics.

The names below load on first use (PEP 562): the heuristics (:mod:`peakopt.solver.heuristics`)
need neither OR-Tools nor PuLP, so ``peakopt schedule`` does not pay for importing them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peakopt.solver.backends import register
    from peakopt.solver.milp import MilpTooLarge
    from peakopt.solver.pipeline import BACKENDS, solve
    from peakopt.solver.quick import quick_optimum
    from peakopt.solver.robust import solve_robust

__all__ = ["BACKENDS", "MilpTooLarge", "quick_optimum", "register", "solve", "solve_robust"]

#: public name -> the module that defines it
_HOMES = {
    "BACKENDS": "peakopt.solver.pipeline",
    "MilpTooLarge": "peakopt.solver.milp",
    "quick_optimum": "peakopt.solver.quick",
    "register": "peakopt.solver.backends",
    "solve": "peakopt.solver.pipeline",
    "solve_robust": "peakopt.solver.robust",
}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
