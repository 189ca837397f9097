"""The independent judge: scores any schedule; depends on peakopt.models only.

The names below load on first use (PEP 562), so that a command importing one judge function
does not pay for NumPy, the simulator and the tables (a command's ``--help`` imports none of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from peakopt.models.extras import lazy_face

if TYPE_CHECKING:
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
    from peakopt.oracle.uncertain.names import EXECUTIONS, Execution
    from peakopt.oracle.uncertain.scenarios import Noise, Scenarios, draw
    from peakopt.oracle.uncertain.simulate import Simulation, execute
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

#: public name -> the module that defines it
_HOMES = {
    "BatchScorer": "peakopt.oracle.vector.batch",
    "BatchScores": "peakopt.oracle.vector.batch",
    "EXECUTIONS": "peakopt.oracle.uncertain.names",
    "Execution": "peakopt.oracle.uncertain.names",
    "InvalidReference": "peakopt.oracle.judge.references",
    "Measured": "peakopt.oracle.judge.metrics",
    "Noise": "peakopt.oracle.uncertain.scenarios",
    "PlanRow": "peakopt.oracle.tables.rows",
    "PlanScore": "peakopt.oracle.tables.planning",
    "ReplayOptions": "peakopt.oracle.tables.score_rows",
    "ResourceScore": "peakopt.oracle.judge.verdict",
    "Scenarios": "peakopt.oracle.uncertain.scenarios",
    "Score": "peakopt.oracle.judge.verdict",
    "ScoreRow": "peakopt.oracle.tables.rows",
    "Simulation": "peakopt.oracle.uncertain.simulate",
    "SimulationError": "peakopt.oracle.uncertain.dispatch",
    "TOLERANCE": "peakopt.oracle.base.exact",
    "Violation": "peakopt.oracle.judge.verdict",
    "aggregate": "peakopt.oracle.tables.aggregate",
    "aggregate_plans": "peakopt.oracle.tables.aggregate",
    "broken_pins": "peakopt.oracle.judge.pins",
    "check_references": "peakopt.oracle.judge.references",
    "correlate": "peakopt.oracle.tables.aggregate",
    "cva_floor": "peakopt.oracle.judge.metrics",
    "draw": "peakopt.oracle.uncertain.scenarios",
    "evaluate": "peakopt.oracle.judge.evaluate",
    "execute": "peakopt.oracle.uncertain.simulate",
    "gaps": "peakopt.oracle.judge.metrics",
    "load_profile": "peakopt.oracle.judge.sweep",
    "measure": "peakopt.oracle.judge.metrics",
    "parse_response": "peakopt.oracle.answers.parse",
    "parse_starts": "peakopt.oracle.answers.parse",
    "plan_score": "peakopt.oracle.tables.planning",
    "replay": "peakopt.oracle.answers.replay",
    "runs": "peakopt.oracle.judge.sweep",
    "same_time": "peakopt.oracle.base.exact",
    "score_batch": "peakopt.oracle.vector.batch",
    "score_prediction": "peakopt.oracle.tables.score_rows",
    "score_record": "peakopt.oracle.tables.score_rows",
    "with_reference": "peakopt.oracle.judge.evaluate",
}


__getattr__, __dir__ = lazy_face(globals(), _HOMES)
