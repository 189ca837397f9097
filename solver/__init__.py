"""Exact solvers (CP-SAT, MILP), heuristics and campaigns."""

from peakopt.solver.milp import MilpTooLarge
from peakopt.solver.solve import BACKENDS, solve

__all__ = ["BACKENDS", "MilpTooLarge", "solve"]
