"""Exact solvers (CP-SAT, MILP) and heuristics.

The names below load on first use (PEP 562): the heuristics (:mod:`peakopt.solver.heuristics`)
need neither OR-Tools nor PuLP, so ``peakopt schedule`` does not pay for importing them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from peakopt.models.extras import lazy_face

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


__getattr__, __dir__ = lazy_face(globals(), _HOMES)
