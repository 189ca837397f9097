"""What Inspect registers under ``peakopt/``: tasks and solvers (the ``inspect_ai`` entry point)."""

from peakopt.evals.plan import plan
from peakopt.evals.schedule import schedule
from peakopt.evals.solvers import oracle, trivial

__all__ = ["oracle", "plan", "schedule", "trivial"]
