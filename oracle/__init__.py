"""The independent judge: scores any schedule; depends on peakopt.models only."""

from peakopt.oracle.answers.parse import parse_response, parse_starts
from peakopt.oracle.answers.replay import replay
from peakopt.oracle.base.exact import TOLERANCE, same_time
from peakopt.oracle.judge.evaluate import evaluate, with_reference
from peakopt.oracle.judge.metrics import Measured, cva_floor, gaps, measure
from peakopt.oracle.judge.pins import broken_pins
from peakopt.oracle.judge.references import InvalidReference, check_references
from peakopt.oracle.judge.sweep import load_profile, runs
from peakopt.oracle.judge.verdict import ResourceScore, Score, Violation
from peakopt.oracle.tables.aggregate import aggregate, aggregate_plans, correlate
from peakopt.oracle.tables.planning import PlanScore, plan_score
from peakopt.oracle.tables.rows import PlanRow, ScoreRow
from peakopt.oracle.tables.score_rows import ReplayOptions, score_prediction, score_record
from peakopt.oracle.uncertain.dispatch import SimulationError
from peakopt.oracle.uncertain.scenarios import Noise, Scenarios, draw
from peakopt.oracle.uncertain.simulate import EXECUTIONS, Execution, Simulation, execute
from peakopt.oracle.vector.batch import BatchScorer, BatchScores, score_batch

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
