"""The independent judge: scores any schedule; depends on peakopt.models only."""

from peakopt.oracle.aggregate import aggregate, aggregate_plans, correlate
from peakopt.oracle.batch import BatchScorer, BatchScores, score_batch
from peakopt.oracle.dispatch import SimulationError
from peakopt.oracle.evaluate import evaluate, with_reference
from peakopt.oracle.exact import TOLERANCE, same_time
from peakopt.oracle.metrics import Measured, cva_floor, gaps, measure
from peakopt.oracle.parse import parse_response, parse_starts
from peakopt.oracle.pins import broken_pins
from peakopt.oracle.planning import PlanScore, plan_score
from peakopt.oracle.references import InvalidReference, check_references
from peakopt.oracle.replay import replay
from peakopt.oracle.rows import PlanRow, ScoreRow
from peakopt.oracle.scenarios import Noise, Scenarios, draw
from peakopt.oracle.score import ResourceScore, Score, Violation
from peakopt.oracle.scoring import ReplayOptions, score_prediction, score_record
from peakopt.oracle.simulate import EXECUTIONS, Execution, Simulation, execute
from peakopt.oracle.sweep import load_profile, runs

__all__ = [
    "EXECUTIONS",
    "TOLERANCE",
    "BatchScorer",
    "BatchScores",
    "Execution",
    "InvalidReference",
    "Measured",
    "Noise",
    "PlanRow",
    "PlanScore",
    "ReplayOptions",
    "ResourceScore",
    "Scenarios",
    "Score",
    "ScoreRow",
    "Simulation",
    "SimulationError",
    "Violation",
    "aggregate",
    "aggregate_plans",
    "broken_pins",
    "check_references",
    "correlate",
    "cva_floor",
    "draw",
    "evaluate",
    "execute",
    "gaps",
    "load_profile",
    "measure",
    "parse_response",
    "parse_starts",
    "plan_score",
    "replay",
    "runs",
    "same_time",
    "score_batch",
    "score_prediction",
    "score_record",
    "with_reference",
]
