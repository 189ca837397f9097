"""Exact solvers (CP-SAT, MILP) and heuristics."""

from peakopt.solver.backends import register
from peakopt.solver.milp import MilpTooLarge
from peakopt.solver.solve import BACKENDS, solve

__all__ = ["BACKENDS", "MilpTooLarge", "register", "solve"]
