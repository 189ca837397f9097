"""Exact solvers (CP-SAT, MILP), heuristics and campaigns."""
