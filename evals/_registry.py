"""The tasks Inspect registers under ``peakopt/`` (the ``inspect_ai`` entry point of pyproject.toml)."""

from peakopt.evals.plan import plan
from peakopt.evals.schedule import schedule

__all__ = ["plan", "schedule"]
