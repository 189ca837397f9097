"""The independent judge: scores any schedule; depends on peakopt.models only."""

from peakopt.oracle.evaluate import TOLERANCE, cva_floor, evaluate, load_profile, runs
from peakopt.oracle.score import ResourceScore, Score, Violation

__all__ = [
    "TOLERANCE",
    "ResourceScore",
    "Score",
    "Violation",
    "cva_floor",
    "evaluate",
    "load_profile",
    "runs",
]
