"""Stress campaigns under noise: every method judged on the same sampled scenarios (``stress --noise``).

A row is then a Monte Carlo estimate over ``samples`` scenarios of its workflow
(:meth:`peakopt.campaign.noise_run.NoiseRun.draw`: common random numbers, so every method, policy and
machine is judged on the same realisations, and a rerun on the same ones):

- a method runs through its online form (:func:`peakopt.solver.heuristics.online.policy_factory`:
  it decides at run time from what has finished), or with ``--execute POLICY`` its nominal
  plan is executed by that policy (:mod:`peakopt.oracle.uncertain.simulate`);
- :data:`~peakopt.campaign.noise_run.OPTIMUM_ROW` (with ``--execute``): the proven optimum, executed by
  the policy — what PeakBench's Table 8 perturbs;
- :data:`~peakopt.campaign.noise_run.ROBUST_ROW`: the robust reference
  (:func:`peakopt.solver.robust.solve_robust`), executed as the partial-order schedule it is.

Each realised schedule is scored by the oracle on its realised workflow and its makespan
compared with the scenario's perfect-information bound (:mod:`peakopt.campaign.hindsight`).
The bounds of every scenario of the campaign are found first (:func:`attach_bounds`), on the
pools, and kept in the store's ``bounds`` table; a rerun, another policy or another method on
the same scenarios reuses them. Rows are keyed by the noise settings too
(:attr:`peakopt.campaign.noise_run.NoiseRun.params`), so one store holds several noise levels.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from peakopt.campaign.executors import Executor
from peakopt.campaign.limits import describe, time_limit
from peakopt.campaign.noise_run import ONLINE, OPTIMUM_ROW, ROBUST_ROW, NoiseRun
from peakopt.campaign.runner import Work
from peakopt.campaign.store import Result, Store
from peakopt.campaign.stress import (
    Done,
    Item,
    error_result,
    failed_item,
    method_schedule,
    scored_result,
    solve_reference,
)
from peakopt.models import SolveResult
from peakopt.oracle.tables.montecarlo import monte_carlo
from peakopt.oracle.uncertain.flows import resource_flow_edges
from peakopt.oracle.uncertain.simulate import Simulation
from peakopt.oracle.vector.realised import RealisedScorer
from peakopt.solver import solve_robust
from peakopt.solver.heuristics import policy_factory

if TYPE_CHECKING:
    from peakopt.campaign.hindsight import Bounds


def attach_bounds(
    items: Sequence[Item],
    store: Store,
    executor: Executor | None,
    noise: NoiseRun,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Item], Bounds]:
    """The items with their scenarios and each scenario's perfect-information bound.

    Bounds come from the store where it has them, else are solved (on ``executor``, None: here)
    and written to it chunk by chunk, so a run killed meanwhile keeps them. ``progress`` is
    called with (scenarios bounded now, scenarios to bound in all) as chunks arrive.
    """
    # imported here (the exact solver behind it): `stress --help` must not pay for OR-Tools
    from peakopt.campaign.hindsight import StoreBounds, perfect_information, scenario_jobs

    drawn = [noise.draw(item.workflow, seed) for item in items]
    jobs = [scenario_jobs(item.workflow, item.machine, s) for item, s in zip(items, drawn, strict=True)]
    found = perfect_information(
        (job for group in jobs for job in group),
        StoreBounds(store),
        executor=executor,
        time_limit=noise.bound_limit,
        seed=seed,
        progress=progress,
    )
    return [
        # the starts stay behind: a worker needs the figures only
        replace(item, scenarios=s, bounds=tuple(replace(found.by_key[j.key], starts=()) for j in group))
        for item, s, group in zip(items, drawn, jobs, strict=True)
    ], found


def simulation(item: Item, method: str, reference: SolveResult | None) -> tuple[Simulation, str]:
    """How ``method`` runs on the item's scenarios, and the name of that execution policy."""
    workflow, machine, settings = item.workflow, item.machine, item.settings
    noise = settings.noise
    assert noise is not None
    if method == ROBUST_ROW:
        robust = solve_robust(
            workflow, machine, time_limit=settings.time_limit, workers=settings.workers, seed=settings.seed
        )
        plan = robust.schedule
        if plan is None or robust.status not in ("optimal", "feasible"):
            raise RuntimeError(f"no robust reference: {robust.message or robust.status}")
        return Simulation(workflow, machine, "pos", plan), "pos"
    if noise.execute is None:
        return Simulation(workflow, machine, factory=policy_factory(method, seed=settings.seed)), ONLINE
    if method == OPTIMUM_ROW:
        plan = None if reference is None else reference.schedule
        if plan is None:
            raise RuntimeError("no reference schedule to execute")
    else:
        plan = method_schedule(item, method)
    if noise.execute == "pos" and not plan.edges:
        # a plan is a partial-order schedule by its resource-flow edges (raises if none can make it safe)
        plan = plan.model_copy(update={"edges": resource_flow_edges(workflow, machine, plan.starts)})
    return Simulation(workflow, machine, noise.execute, plan), noise.execute


def run_noisy_method(
    item: Item, method: str, reference: SolveResult | None, scorer: RealisedScorer | None = None
) -> Result:
    """One method over every scenario of the item: its row at nominal durations, with the Monte Carlo figures.

    The figures' gap and efficiency are against each scenario's perfect-information bound: its
    optimum where proven, else its lower bound (the gap is then an upper bound on the true one).
    """
    began = time.perf_counter()
    scenarios = item.scenarios
    assert scenarios is not None
    try:
        with time_limit(item.settings.method_limit * max(1, len(scenarios))):
            sim, execution = simulation(item, method, reference)
            nominal = sim.run([t.length for t in item.workflow.tasks])
            figures = monte_carlo(
                item.workflow,
                item.machine,
                sim,
                scenarios,
                execution=execution,
                optima=[b.value for b in item.bounds],
                scorer=scorer,
            )
    except Exception as exc:
        return error_result(item, method, reference, describe(exc), time.perf_counter() - began)
    # the noise settings, as labels to group by (``varies``: the tasks' own distributions)
    params = item.settings.noise.params if item.settings.noise else {}
    labels = {key: "varies" if value is None else str(value) for key, value in params.items()}
    return scored_result(
        item, method, sim.schedule(nominal, method), reference, began, monte_carlo=figures, labels=labels
    )


def run_noisy_item(item: Item) -> Done:
    """In a worker: the reference (solved once if unknown), then every method over every scenario."""
    reference = item.reference if item.reference is not None else solve_reference(item)
    scorer = RealisedScorer(item.workflow, item.machine)  # one per pair, for every method
    results = [run_noisy_method(item, method, reference, scorer) for method in item.methods]
    return Done(item, reference, not item.stored, results)


#: What the runner runs for ``peakopt stress --noise``: a lost item is split into its methods first.
NOISY: Work[Item, Done] = Work(run_noisy_item, Item.deadline, failed_item, Item.parts)
