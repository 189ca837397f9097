"""One flat row per scored record: what ``peakopt score`` writes and what aggregates read."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from peakopt.oracle.answers.parse import TimingKind
from peakopt.oracle.judge.verdict import Score, Violation
from peakopt.oracle.tables.planning import PlanScore

_RESTATED = ("missing", "negative_start")

#: How far above 1 a share or an efficiency may be from float noise: OPT / makespan of a safe
#: schedule within the oracle's tolerance of the optimum (1e-12 of its time scale) stays below it.
SHARE_SLACK = 1e-9


def not_a_row(exc: ValidationError) -> str:
    """The rule a stored row breaks, from pydantic's first error: ``not a score row (field: why)``."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    why = str(first["msg"]).removeprefix("Value error, ")
    return f"not a score row ({where}: {why})"


def share(value: float | None, what: str) -> float | None:
    """``value`` when it is None or a finite number in [0, 1] (``what`` is named otherwise).

    Shares (a safe rate) and efficiencies (OPT / makespan) can be nothing else: a stored 1.7 or
    NaN would be ranked and averaged as if a schedule could earn it.

    Raises
    ------
    ValueError
        Naming ``what``, the rule and the value.
    """
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0 + SHARE_SLACK):
        raise ValueError(f"{what} must be a finite number in [0, 1], not {value!r}")
    return value


def _kinds(problems: Sequence[Violation]) -> list[str]:
    return sorted({p.kind for p in problems})


class MonteCarloMeans(BaseModel):
    """The Monte Carlo figures that are means over scenarios (of one record, or of a group's records).

    Attributes
    ----------
    safe_rate
        Share of scenarios run safely: no dependency broken, no avoidable overflow of a hard resource.
    overflow_rate
        Probability of an avoidable overflow of a hard resource (a load over a capacity that a
        schedule could avoid; a soft resource's slows the run down instead).
    violation_rate
        Share of scenarios in which some dependency is broken (``literal`` only breaks them).
    mean_makespan, p95_makespan
        Expected and 95th-percentile (numpy's linear interpolation) realised makespan.
    mean_avoidable_cva
        Expected avoidable capacity-violation area.
    gap
        Mean of (makespan - OPT_k) / OPT_k over the safe scenarios with an optimum (a run slowed
        by soft overflow: its slowed makespan, never below OPT_k).
    efficiency
        Mean of OPT_k / makespan over the scenarios with an optimum, an unsafe run counting 0
        (the slowed makespan likewise).
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    safe_rate: float | None = None
    overflow_rate: float | None = None
    violation_rate: float | None = None
    mean_makespan: float | None = None
    p95_makespan: float | None = None
    mean_avoidable_cva: float | None = None
    gap: float | None = None
    efficiency: float | None = None

    @field_validator("safe_rate", "overflow_rate", "violation_rate", "efficiency")
    @classmethod
    def _share(cls, value: float | None, info: ValidationInfo) -> float | None:
        return share(value, str(info.field_name))


class MonteCarlo(MonteCarloMeans):
    """One plan (or policy) executed over a workflow's sampled scenarios: probabilities and expectations.

    Built by :func:`peakopt.oracle.tables.montecarlo.monte_carlo`. Rates and means
    (:class:`MonteCarloMeans`) are over every scenario (a run that breaks a dependency or
    overflows still has a makespan); the gap and the efficiency need the perfect-information
    bound (each scenario's own optimum).

    Attributes
    ----------
    execution
        The execution policy (``literal``, ``enforced``, ``order``, ``pos`` or a policy's name).
    samples, seed
        How many scenarios, drawn with which seed (:func:`peakopt.oracle.uncertain.scenarios.draw`).
    noise_duration, noise_demand
        The global noise that replaced the tasks' own distributions; None: their own ``varies``.
    scored, message
        False when the record gave no plan to execute (unreadable, a step missing), and why:
        every rate and mean is then None but ``safe_rate`` 0, as an invalid record counts.
    bounded
        Scenarios whose perfect-information optimum was given.
    """

    execution: str
    samples: int
    seed: int = 0
    noise_duration: float | None = None
    noise_demand: float | None = None
    scored: bool = True
    message: str | None = None
    bounded: int = 0


def drop_absent(value: BaseModel, handler: SerializerFunctionWrapHandler, key: str) -> dict[str, Any]:
    """``value`` dumped without ``key`` when it is None (output without it stays byte-identical)."""
    data: dict[str, Any] = handler(value)
    if data.get(key, 0) is None:
        del data[key]
    return data


class ScoreRow(BaseModel):
    """The oracle's verdict on one input record, flat enough for JSON Lines and CSV.

    Metrics are None when nothing could be scored (an unparseable answer, an
    unknown workflow). For an invalid schedule that could be placed in time
    they are computed on the steps that have a start.

    Attributes
    ----------
    line, id
        Where the record came from: its line in the input file, its ``id`` field.
    workflow, machine, source, tier
        What was scored, who produced it, and ``workflow.meta["tier"]``.
    labels
        The record's own short scalar fields beyond those the oracle reads (a
        temperature, a prompt variant, a run id), as text, so that tables can
        group by them (``--by temperature``).
    setting
        The prompt setting the answer was given in (``rasc``, ``durations``...), as its record says.
    valid
        False when the record could not be read or its schedule breaks a rule.
    reasons, reason_kinds
        Why it is invalid: the messages, and their kinds (``missing``,
        ``dependency``, ``parse``... see :class:`~peakopt.oracle.judge.verdict.Violation`).
    requested, requested_kind
        The timings as read (starts, or requested delays).
    from_reasoning
        True when the answer's schedule was read from its reasoning block
        (``<think>``...), the text outside holding none.
    starts
        The start times scored (after replay).
    pushed, pushed_seconds, filled
        Replay figures: steps the runtime delayed and by how much in total,
        missing steps filled as soon as ready.
    makespan ... dependency_violations
        The metrics of :class:`~peakopt.oracle.judge.verdict.Score`.
    avoidable_cva_soft, slowed_makespan
        The avoidable overflow of the machine's soft resources (no unsafety) and, for a valid
        schedule (an unsafe one too), the makespan under the slowdown it causes, which a safe
        schedule's gaps and efficiency are figured from; None for an invalid one (see
        :class:`~peakopt.oracle.judge.verdict.Score`).
    peak_ratio, violation_area
        Per resource.
    overflows
        The overflow intervals, as messages.
    gap, gap_vs_lb, gap_vs_ub, reference_status
        Against the reference result, when one was given.
    efficiency
        OPT / makespan when valid and safe, 0 otherwise; None without a proven
        optimum (:func:`peakopt.oracle.judge.metrics.efficiency`).
    monte_carlo
        The plan executed over sampled scenarios (``peakopt score --samples``), if asked for;
        left out of the row's JSON otherwise.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    line: int | None = None
    id: str | None = None
    workflow: str | None = None
    machine: str | None = None
    source: str | None = None
    tier: str | None = None
    setting: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    valid: bool
    reasons: list[str] = Field(default_factory=list)
    reason_kinds: list[str] = Field(default_factory=list)
    requested: dict[str, float] | None = None
    requested_kind: TimingKind | None = None
    from_reasoning: bool = False
    starts: dict[str, float] | None = None
    pushed: int = 0
    pushed_seconds: float = 0.0
    filled: int = 0
    makespan: float | None = None
    cva: float | None = None
    cva_floor: float | None = None
    avoidable_cva: float | None = None
    avoidable_cva_soft: float | None = None
    slowed_makespan: float | None = None
    safe: bool = False
    mru: float | None = None
    strict_mru: float | None = None
    safe_mru: float | None = None
    dependency_violations: int | None = None
    peak_ratio: dict[str, float] = Field(default_factory=dict)
    violation_area: dict[str, float] = Field(default_factory=dict)
    overflows: list[str] = Field(default_factory=list)
    gap: float | None = None
    gap_vs_lb: float | None = None
    gap_vs_ub: float | None = None
    reference_status: str | None = None
    efficiency: float | None = None
    monte_carlo: MonteCarlo | None = None

    @field_validator("efficiency")
    @classmethod
    def _efficiency(cls, value: float | None) -> float | None:
        return share(value, "efficiency (OPT / makespan)")

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return drop_absent(self, handler, "monte_carlo")

    @classmethod
    def invalid(cls, problems: Sequence[Violation], **identity: Any) -> ScoreRow:
        """A row for a record that could not be scored at all."""
        return cls(
            valid=False, reasons=[p.message for p in problems], reason_kinds=_kinds(problems), **identity
        )

    @classmethod
    def from_score(cls, score: Score, problems: Sequence[Violation] = (), **extra: Any) -> ScoreRow:
        """A row from the oracle's :class:`Score` and the record's own problems.

        Parameters
        ----------
        score
            From :func:`~peakopt.oracle.evaluate` (with gaps, if any).
        problems
            Reading and replay problems; any makes the row invalid, unsafe,
            and its safe MRU 0.
        **extra
            Other fields: ``line``, ``id``, ``tier``, ``requested``, ``pushed``...
        """
        covered = {t for p in problems for t in p.tasks}
        # A step the record already flags (non-numeric, negative delay) is not also "missing".
        own = [
            v
            for v in score.violations
            if v.kind != "overflow" and not (v.kind in _RESTATED and set(v.tasks) <= covered)
        ]
        reasons = [*problems, *own]
        valid = score.valid and not problems
        safe = score.safe and valid
        return cls(
            workflow=score.workflow,
            machine=score.machine,
            source=score.source,
            valid=valid,
            reasons=[r.message for r in reasons],
            reason_kinds=_kinds(reasons),
            makespan=score.makespan,
            cva=score.cva,
            cva_floor=score.cva_floor,
            avoidable_cva=score.avoidable_cva,
            avoidable_cva_soft=score.avoidable_cva_soft,
            slowed_makespan=score.slowed_makespan if valid else None,
            safe=safe,
            mru=score.mru,
            strict_mru=score.strict_mru,
            safe_mru=score.safe_mru if safe else 0.0,
            dependency_violations=score.dependency_violations,
            peak_ratio={r: s.peak_ratio for r, s in score.resources.items()},
            violation_area={r: s.violation_area for r, s in score.resources.items()},
            overflows=[v.message for v in score.violations if v.kind == "overflow"],
            gap=score.gap,
            gap_vs_lb=score.gap_vs_lb,
            gap_vs_ub=score.gap_vs_ub,
            **extra,
        )


class PlanRow(BaseModel):
    """Planning metrics of one prediction record, flat for JSON Lines and CSV.

    Metric fields are None when the record could not be read (``valid`` False);
    the ``reduction_*`` fields are also None for a cyclic prediction. See
    :class:`~peakopt.oracle.tables.planning.PlanScore` for the definitions;
    ``setting`` and ``labels`` are the record's, as in :class:`ScoreRow`.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    line: int | None = None
    id: str | None = None
    workflow: str | None = None
    source: str | None = None
    tier: str | None = None
    setting: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    valid: bool
    reasons: list[str] = Field(default_factory=list)
    reason_kinds: list[str] = Field(default_factory=list)
    predicted_edges: list[tuple[str, str]] | None = None
    edge_precision: float | None = None
    edge_recall: float | None = None
    edge_f1: float | None = None
    closure_precision: float | None = None
    closure_recall: float | None = None
    closure_f1: float | None = None
    reduction_precision: float | None = None
    reduction_recall: float | None = None
    reduction_f1: float | None = None
    ged: int | None = None
    ged_normalised: float | None = None
    concurrency_precision: float | None = None
    concurrency_recall: float | None = None
    concurrency_f1: float | None = None
    exact_match: bool | None = None
    order_match: bool | None = None
    cyclic: bool | None = None
    cycle: list[str] | None = None
    hallucinated: list[str] = Field(default_factory=list)
    unmentioned: list[str] = Field(default_factory=list)

    @classmethod
    def invalid(cls, problems: Sequence[Violation], **identity: Any) -> PlanRow:
        """A row for a prediction that could not be read."""
        return cls(
            valid=False, reasons=[p.message for p in problems], reason_kinds=_kinds(problems), **identity
        )

    @classmethod
    def from_score(cls, score: PlanScore, edges: Iterable[tuple[str, str]], **identity: Any) -> PlanRow:
        """A row from a :class:`~peakopt.oracle.tables.planning.PlanScore` and the predicted edges."""
        flat: dict[str, Any] = {}
        for name in ("edges", "closure", "reduction", "concurrency"):
            prf = getattr(score, name)
            prefix = "edge" if name == "edges" else name
            for field in ("precision", "recall", "f1"):
                flat[f"{prefix}_{field}"] = None if prf is None else getattr(prf, field)
        return cls(
            valid=True,
            predicted_edges=sorted(edges),
            ged=score.ged,
            ged_normalised=score.ged_normalised,
            exact_match=score.exact_match,
            order_match=score.order_match,
            cyclic=score.cyclic,
            cycle=score.cycle,
            hallucinated=score.hallucinated,
            unmentioned=score.unmentioned,
            **flat,
            **identity,
        )
