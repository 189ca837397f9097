"""Score records under an execution policy, at nominal durations and over sampled scenarios.

What ``peakopt score --execute POLICY --samples N`` does to each record:

- its *plan* is the record's schedule as given (its starts, or its requested delays turned
  into starts at nominal durations, :func:`plan_of`), with the resource-flow ``edges`` it may
  carry (a robust reference's); under ``pos``, a plan without edges (a ``solve`` reference
  carries ``"edges": []``) is the partial-order schedule of the edges its starts imply
  (:func:`~peakopt.oracle.uncertain.flows.resource_flow_edges`, as ``stress --execute pos`` does), not
  its dependencies alone (which would run it as soon as possible, resources ignored); a plan
  whose starts no edges make safe cannot be executed so, and its row says why;
- the deterministic row is the oracle's verdict on the plan *executed at nominal durations*:
  for ``literal`` and ``enforced`` that is the replay of :mod:`peakopt.oracle.answers.replay`
  (``literal`` and ``runtime``), unchanged; for ``order``, ``pos`` and an online policy, the
  simulator's starts at nominal durations;
- with samples, the plan runs over the workflow's scenarios (:func:`~peakopt.oracle.uncertain.scenarios.draw`,
  the same for every record and machine of the workflow) and the row gains its
  :class:`~peakopt.oracle.tables.rows.MonteCarlo` figures. A record without a usable plan gets figures
  marked unscored (counted unsafe), with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from peakopt.models import Edge, Machine, PeakoptError, Schedule, Suite, Workflow
from peakopt.oracle.answers.names import Mode
from peakopt.oracle.answers.replay import replay
from peakopt.oracle.judge.verdict import Violation
from peakopt.oracle.tables.montecarlo import monte_carlo, unscored
from peakopt.oracle.tables.rows import MonteCarlo, ScoreRow
from peakopt.oracle.tables.score_rows import (
    ReferenceIndex,
    ReplayOptions,
    find_machine,
    find_workflow,
    read_timings,
    score_record,
)
from peakopt.oracle.uncertain.dispatch import SimulationError
from peakopt.oracle.uncertain.flows import resource_flow_edges
from peakopt.oracle.uncertain.names import EXECUTIONS
from peakopt.oracle.uncertain.online import PolicyFactory
from peakopt.oracle.uncertain.scenarios import Noise, Scenarios, draw
from peakopt.oracle.uncertain.simulate import Simulation
from peakopt.oracle.vector.realised import RealisedScorer

#: ``optima(workflow, machine, scenarios)``: per scenario, the optimum of its realised workflow.
Optima = Callable[[Workflow, Machine, Scenarios], Sequence[float | None]]
#: The executions a deterministic replay already gives: no simulator needed at nominal durations.
REPLAYED = {"literal": "literal", "enforced": "runtime"}


@dataclass(frozen=True)
class Sampling:
    """How records are executed and sampled.

    Attributes
    ----------
    execution
        ``literal``, ``enforced``, ``order``, ``pos``, or the name of ``factory``'s policy.
    samples
        Scenarios per record (0: the deterministic row only).
    seed, noise
        As :func:`~peakopt.oracle.uncertain.scenarios.draw` takes them.
    factory
        An online policy (built fresh per run) instead of an execution of the plan.
    optima
        The perfect-information bound: per scenario of a workflow × machine, its realised
        workflow's optimum (None where unknown), e.g. from :mod:`peakopt.campaign.hindsight`;
        asked once per pair. None: no gap or efficiency figures.
    """

    execution: str = "literal"
    samples: int = 0
    seed: int = 0
    noise: Noise | None = None
    factory: PolicyFactory | None = None
    optima: Optima | None = None


@dataclass
class Sampler:
    """Runs records under a :class:`Sampling`, drawing each workflow's scenarios once."""

    sampling: Sampling
    _scenarios: dict[int, tuple[Workflow, Scenarios]] = field(default_factory=dict)
    _scorers: dict[tuple[int, int], tuple[Workflow, Machine, RealisedScorer]] = field(default_factory=dict)
    _optima: dict[tuple[int, int], Sequence[float | None]] = field(default_factory=dict)

    def scenarios(self, workflow: Workflow) -> Scenarios:
        """The workflow's scenarios (drawn once; the workflow is kept so its id() stays its own)."""
        found = self._scenarios.get(id(workflow))
        if found is None:
            s = self.sampling
            found = self._scenarios[id(workflow)] = (
                workflow,
                draw(workflow, s.samples, seed=s.seed, noise=s.noise),
            )
        return found[1]

    def scorer(self, workflow: Workflow, machine: Machine) -> RealisedScorer:
        """The realised scorer of the pair (built once)."""
        key = (id(workflow), id(machine))
        if key not in self._scorers:
            self._scorers[key] = (workflow, machine, RealisedScorer(workflow, machine))
        return self._scorers[key][2]

    def simulation(self, workflow: Workflow, machine: Machine, plan: Schedule | None) -> Simulation:
        """The compiled execution of ``plan`` (or the online policy) on the pair."""
        s = self.sampling
        if s.factory is not None:
            return Simulation(workflow, machine, factory=s.factory, name=f"policy {s.execution!r}")
        if s.execution not in EXECUTIONS:
            raise ValueError(f"unknown execution {s.execution!r}")
        if s.execution == "pos" and plan is not None and not plan.edges:
            plan = with_implied_edges(workflow, machine, plan)
        return Simulation(workflow, machine, s.execution, plan)

    def optima(self, workflow: Workflow, machine: Machine) -> Sequence[float | None] | None:
        """The pair's perfect-information bound per scenario (asked once), if the sampling has one."""
        bound = self.sampling.optima
        if bound is None:
            return None
        key = (id(workflow), id(machine))
        if key not in self._optima:
            self.scorer(workflow, machine)  # holds the pair, so that the ids stay theirs
            self._optima[key] = bound(workflow, machine, self.scenarios(workflow))
        return self._optima[key]

    def figures(self, workflow: Workflow, machine: Machine, plan: Schedule | None) -> MonteCarlo:
        """The Monte Carlo figures of ``plan`` on the pair; unscored, with the reason, when it cannot run."""
        scenarios = self.scenarios(workflow)
        try:
            if plan is None and self.sampling.factory is None:
                raise PeakoptError("the record gives no plan to execute")
            simulation = self.simulation(workflow, machine, plan)
            return monte_carlo(
                workflow,
                machine,
                simulation,
                scenarios,
                execution=self.sampling.execution,
                optima=self.optima(workflow, machine),
                scorer=self.scorer(workflow, machine),
            )
        except PeakoptError as exc:
            return self.unscored(str(exc))

    def unscored(self, message: str) -> MonteCarlo:
        """The figures of a record that cannot run (:func:`~peakopt.oracle.tables.montecarlo.unscored`)."""
        s = self.sampling
        return unscored(s.execution, s.samples, s.seed, s.noise, message)


def with_implied_edges(workflow: Workflow, machine: Machine, plan: Schedule) -> Schedule:
    """``plan`` with the resource-flow edges its starts imply: a partial-order schedule to execute by ``pos``.

    Raises
    ------
    SimulationError
        When no edges make its starts safe (a dependency broken, a capacity overflowed).
    """
    try:
        edges = resource_flow_edges(workflow, machine, plan.starts)
    except ValueError as exc:
        raise SimulationError(
            f"the plan carries no resource-flow edges and its starts imply none that are safe ({exc})"
        ) from None
    return plan.model_copy(update={"edges": edges})


def read_edges(record: Mapping[str, Any]) -> tuple[Edge, ...] | Violation:
    """The resource-flow ``edges`` a schedule record carries (``[[a, b], ...]``; none without)."""
    found = record.get("edges", [])
    if not isinstance(found, list) or not all(
        isinstance(e, list | tuple) and len(e) == 2 and all(isinstance(s, str) and s for s in e)
        for e in found
    ):
        return Violation(kind="parse", message="'edges' is not a list of [step, step] pairs")
    return tuple((a, b) for a, b in found)


def plan_of(record: Mapping[str, Any] | None, suite: Suite, options: ReplayOptions) -> Schedule | None:
    """The record's schedule as given (starts at nominal durations, and its edges), or None if unusable.

    Unusable: unreadable, an unknown pair, no timings, a step left out (``missing="invalid"``),
    a negative start or broken ``edges``; the deterministic row says which.
    """
    if record is None:
        return None
    pair = _pair(record, suite)
    if pair is None:
        return None
    workflow, machine = pair
    parsed, edges = read_timings(record, workflow), read_edges(record)
    if isinstance(parsed, Violation) or isinstance(edges, Violation) or parsed.problems:
        return None
    planned = replay(workflow, parsed, "literal", options.delay_from, options.missing)
    if planned.problems or set(planned.starts) != set(workflow.index):
        return None
    return Schedule(workflow=workflow.id, machine=machine.name, starts=planned.starts, edges=edges)


def score_sampled(
    record: Mapping[str, Any] | None,
    suite: Suite,
    references: ReferenceIndex | None,
    options: ReplayOptions,
    sampler: Sampler,
    *,
    line: int | None = None,
    error: str | None = None,
) -> ScoreRow:
    """Score one record under the sampler's execution (and samples); never raises on bad content.

    Parameters
    ----------
    record, suite, references, line, error
        As :func:`~peakopt.oracle.tables.score_rows.score_record` takes them.
    options
        Delay origin and missing steps (the replay mode follows the execution).
    sampler
        The execution, the sampling and the caches.
    """
    sampling = sampler.sampling
    replayed = None if sampling.factory is not None else REPLAYED.get(sampling.execution)
    plan = plan_of(record, suite, options) if error is None else None
    if (
        record is None
        or error is not None
        or replayed is not None
        or (plan is None and sampling.factory is None)
    ):
        mode = ReplayOptions(cast(Mode, replayed or "literal"), options.delay_from, options.missing)
        row = score_record(record, suite, references, mode, line=line, error=error)
    else:
        row = _executed(record, suite, references, options, sampler, plan, line)
    if not sampling.samples:
        return row
    pair = None if record is None or error is not None else _pair(record, suite)
    if pair is None:
        return row.model_copy(update={"monte_carlo": sampler.unscored("; ".join(row.reasons))})
    return row.model_copy(update={"monte_carlo": sampler.figures(*pair, plan)})


def _pair(record: Mapping[str, Any], suite: Suite) -> tuple[Workflow, Machine] | None:
    workflow, machine = find_workflow(record, suite), find_machine(record, suite)
    if isinstance(workflow, Violation) or isinstance(machine, Violation):
        return None
    return workflow, machine


def _executed(
    record: Mapping[str, Any],
    suite: Suite,
    references: ReferenceIndex | None,
    options: ReplayOptions,
    sampler: Sampler,
    plan: Schedule | None,
    line: int | None,
) -> ScoreRow:
    """The row of the plan (or policy) run by the simulator at nominal durations."""
    pair = _pair(record, suite)
    if pair is None:
        return score_record(record, suite, references, options, line=line)
    workflow, machine = pair
    try:
        simulation = sampler.simulation(workflow, machine, plan)
        starts = simulation.run([t.length for t in workflow.tasks])
    except PeakoptError as exc:
        rule = Violation(kind="parse", message=f"cannot execute the plan: {exc}")
        return ScoreRow.invalid(
            [rule], line=line, workflow=workflow.id, machine=machine.name, source=record.get("source")
        )
    executed = {k: v for k, v in record.items() if k not in ("response", "starts", "edges")}
    executed["starts"] = dict(zip(workflow.index, starts, strict=True))
    return score_record(executed, suite, references, options, line=line)
