"""Stress campaigns: every workflow × machine × method against the oracle's optimum.

A campaign's backlog is drawn up in the parent (:func:`backlog`): one :class:`Item` per
workflow × machine that still has methods to run, carrying the reference
result when it is already known (from the store or a references file).
Workers (:func:`run_item`) compute the missing reference once — the optimum,
or bounds — then run each method under a soft time limit and score its
schedule with the oracle. The parent writes each item's results to the
store as they arrive (:func:`run_campaign`).

Every row records the identity of the code that made it (:func:`row_code`): a
row whose method (or the oracle) has changed since is stale, and is run again.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from peakopt.campaign.executors import Executor, solve_deadline
from peakopt.campaign.limits import describe, time_limit
from peakopt.campaign.noise_run import REFERENCE_ROWS, ROBUST_ROW, NoiseRun
from peakopt.campaign.references import References, StoreReferences
from peakopt.campaign.runner import Work, run_work
from peakopt.campaign.store import Result, ResultKey, Store, content_hash, params_text
from peakopt.models import Machine, Schedule, SolveResult, Workflow
from peakopt.oracle import ScoreRow, evaluate, with_reference
from peakopt.oracle.tables.score_rows import tier, with_efficiency
from peakopt.oracle.uncertain.scenarios import Scenarios
from peakopt.solver.heuristics import Method, package_code, parse_method

if TYPE_CHECKING:
    from peakopt.campaign.hindsight import Bound

#: Reason kind of a row whose method failed (raised, returned garbage, hung, crashed).
ERROR = "error"


@dataclass(frozen=True)
class Settings:
    """How references are solved and methods run.

    Parameters
    ----------
    time_limit
        Seconds per reference solve.
    workers
        Solver threads per reference solve.
    seed
        Seed of the solver and of seeded methods (part of every row's key).
    method_limit
        Seconds one method may take on one instance before it is stopped.
    noise
        Judge every method under noise (``peakopt stress --samples/--noise``); None:
        deterministically, at nominal durations.
    """

    time_limit: float = 10.0
    workers: int = 1
    seed: int = 0
    method_limit: float = 60.0
    noise: NoiseRun | None = None

    @property
    def params(self) -> str:
        """The params part of the rows' keys (the noise settings too, under noise)."""
        extra = {} if self.noise is None else self.noise.params
        return params_text({"seed": self.seed, **extra})


@dataclass(frozen=True)
class Item:
    """One workflow × machine and the methods still to run on it."""

    instance: str
    machine_key: str
    workflow: Workflow
    machine: Machine
    methods: tuple[str, ...]
    settings: Settings
    reference: SolveResult | None = None
    stored: bool = False
    codes: tuple[str, ...] = ()
    scenarios: Scenarios | None = None
    bounds: tuple[Bound, ...] = ()

    def code(self, method: str) -> str:
        """The code identity of ``method``'s row, as the parent saw it in the backlog ("" if none)."""
        return dict(zip(self.methods, self.codes, strict=False)).get(method, "")

    def only(self, method: str) -> Item:
        """The same item with ``method`` alone."""
        return replace(self, methods=(method,), codes=(self.code(method),))

    def parts(self) -> list[Item]:
        """The item one method at a time (run so when the whole was lost with its worker)."""
        return [self.only(method) for method in self.methods]

    def deadline(self) -> float:
        """Hard limit in seconds: the solve's (when it is to be solved) and every method's limit.

        Under noise a method runs once per scenario, and the robust reference is solved too.
        """
        solve_time = 0.0 if self.reference is not None else solve_deadline(self.settings.time_limit)
        runs = 1 if self.settings.noise is None else self.settings.noise.samples
        if ROBUST_ROW in self.methods:
            solve_time += solve_deadline(self.settings.time_limit)
        return solve_time + len(self.methods) * self.settings.method_limit * runs


@dataclass(frozen=True)
class Done:
    """What one item gives: its reference (``new`` when the store lacks it) and one result per method."""

    item: Item
    reference: SolveResult | None
    new: bool
    results: list[Result] = field(default_factory=list)


@functools.lru_cache(maxsize=256)
def _method(name: str) -> Method:
    return parse_method(name)


def check_methods(names: Sequence[str]) -> None:
    """Parse every method name (and load plug-ins) before a campaign starts.

    Raises
    ------
    MethodError, PluginError
        An unknown name or a plug-in that cannot be loaded.
    """
    for name in names:
        _method(name)


def row_code(method: str) -> str:
    """The identity of the code behind a row of ``method``: the method's, then the oracle's.

    The oracle's sources count too: a row holds the oracle's verdict, which another
    version of the oracle may give differently. The reference rows of a campaign under
    noise (:data:`REFERENCE_ROWS`) are the solver's.
    """
    if method in REFERENCE_ROWS:
        return f"peakopt.solver:{package_code('peakopt.solver')} oracle:{package_code('peakopt.oracle')}"
    return f"{_method(method).code} oracle:{package_code('peakopt.oracle')}"


def solve_reference(item: Item) -> SolveResult:
    """The reference result of an item's workflow × machine."""
    # imported here: `report` and `stress --help` import this module and must not pay for OR-Tools
    from peakopt.solver import solve

    settings = item.settings
    return solve(
        item.workflow,
        item.machine,
        time_limit=settings.time_limit,
        workers=settings.workers,
        seed=settings.seed,
    )


def method_schedule(item: Item, method: str) -> Schedule:
    """``method``'s schedule of the item's (nominal) workflow, within the method's soft limit."""
    with time_limit(item.settings.method_limit):
        return _method(method).schedule(item.workflow, item.machine, seed=item.settings.seed)


def run_method(item: Item, method: str, reference: SolveResult | None) -> Result:
    """Run one method on the item and score its schedule; a failure becomes an error row."""
    began = time.perf_counter()
    try:
        schedule = method_schedule(item, method)
    except Exception as exc:
        return error_result(item, method, reference, describe(exc), time.perf_counter() - began)
    return scored_result(item, method, schedule, reference, began)


def scored_result(
    item: Item, method: str, schedule: Schedule, reference: SolveResult | None, began: float, **extra: Any
) -> Result:
    """The result of ``method``'s schedule of the item, scored by the oracle against the reference.

    ``extra`` fields go into the row (the Monte Carlo figures of a campaign under noise);
    ``began`` is when the method started (:func:`time.perf_counter`).
    """
    workflow, machine = item.workflow, item.machine
    score = with_reference(evaluate(workflow, machine, schedule), reference)
    row = ScoreRow.from_score(
        score.model_copy(update={"source": method}),
        tier=tier(workflow),
        starts=schedule.starts,
        reference_status=None if reference is None else reference.status,
        **extra,
    )
    return _result(item, method, row, time.perf_counter() - began, None, reference)


def error_result(
    item: Item, method: str, reference: SolveResult | None, message: str, seconds: float = 0.0
) -> Result:
    """The row of a method that gave no schedule: invalid, reason kind :data:`ERROR`."""
    row = ScoreRow(
        workflow=item.workflow.id,
        machine=item.machine.name,
        source=method,
        tier=tier(item.workflow),
        valid=False,
        reasons=[message],
        reason_kinds=[ERROR],
        reference_status=None if reference is None else reference.status,
    )
    return _result(item, method, row, seconds, message, reference)


def _result(
    item: Item, method: str, row: ScoreRow, seconds: float, error: str | None, reference: SolveResult | None
) -> Result:
    return Result(
        item.instance,
        item.machine_key,
        method,
        item.settings.params,
        with_efficiency(row, reference),  # a method that failed earns 0 too
        seconds,
        error,
        reference,
        item.code(method),
    )


def run_item(item: Item) -> Done:
    """In a worker: the reference (solved once if unknown), then every method, scored."""
    reference = item.reference if item.reference is not None else solve_reference(item)
    results = [run_method(item, method, reference) for method in item.methods]
    return Done(item, reference, not item.stored, results)


def failed_item(item: Item, message: str) -> Done:
    """An item whose worker gave nothing (the solve raised, the worker died or hung)."""
    return Done(item, None, False, [error_result(item, m, item.reference, message) for m in item.methods])


@dataclass(frozen=True)
class Pair:
    """A workflow and the machines to run it on."""

    workflow: Workflow
    machines: tuple[Machine, ...]


@dataclass(frozen=True)
class Backlog:
    """What a campaign still has to do.

    Attributes
    ----------
    items
        Workflow × machine pairs with methods still to run.
    keys
        Every result key of the campaign, finished or not.
    skipped
        Rows the store already holds (made by the same code).
    stale
        Rows the store holds but made by other code, to run again.
    """

    items: list[Item]
    keys: set[ResultKey]
    skipped: int
    stale: int = 0

    @property
    def rows(self) -> int:
        """Rows still to run."""
        return sum(len(item.methods) for item in self.items)


def backlog(
    pairs: Iterable[Pair],
    methods: Sequence[str],
    settings: Settings,
    store: Store,
    references: References | None = None,
    redo: Sequence[str] = (),
) -> Backlog:
    """Record the campaign's instances in the store and list what is left to run.

    Parameters
    ----------
    pairs
        Workflows with their machines.
    methods
        Method names.
    settings
        Solve and method settings (the seed is part of every key).
    store
        Where results go; its finished keys are skipped, its references reused.
    references
        Reference results to reuse where the store has none, e.g. a
        :class:`~peakopt.campaign.references.ReferenceFile`.
    redo
        Methods whose rows are run again even where the store has them (the stored
        references and the other methods' rows are kept).
    """
    pairs = list(pairs)
    codes = {m: row_code(m) for m in methods}
    hashes = [content_hash(p.workflow) for p in pairs]
    machines = {_machine_id(m): (content_hash(m), m) for p in pairs for m in p.machines}
    store.add_inputs(zip(hashes, (p.workflow for p in pairs), strict=True), machines.values())
    finished, stored = store.finished(), StoreReferences(store)
    found = Backlog([], set(), 0)
    stale = 0
    for instance, pair in zip(hashes, pairs, strict=True):
        for machine in pair.machines:
            key = machines[_machine_id(machine)][0]
            keys = {m: (instance, key, m, settings.params) for m in methods}
            found.keys.update(keys.values())
            todo = tuple(m for m in methods if m in redo or finished.get(keys[m]) != codes[m])
            stale += sum(m not in redo and keys[m] in finished for m in todo)
            if not todo:
                continue
            known = stored.get(pair.workflow, machine)
            reference = known or (references.get(pair.workflow, machine) if references else None)
            found.items.append(
                Item(
                    instance,
                    key,
                    pair.workflow,
                    machine,
                    todo,
                    settings,
                    reference,
                    known is not None,
                    tuple(codes[m] for m in todo),
                )
            )
    return replace(found, skipped=len(found.keys) - found.rows, stale=stale)


def _machine_id(machine: Machine) -> str:
    return machine.name + repr(sorted(machine.capacity.items()))


#: What the runner runs for ``peakopt stress``: a lost item is split into its methods first.
CAMPAIGN: Work[Item, Done] = Work(run_item, Item.deadline, failed_item, Item.parts)


def run_campaign(
    executor: Executor, items: Sequence[Item], store: Store, *, chunk: int, work: Work[Item, Done] = CAMPAIGN
) -> Iterator[Done]:
    """Run the items with the one runner; write each one's results to the store as it arrives, and yield it.

    ``work`` is :data:`CAMPAIGN`, or :data:`peakopt.campaign.stress_noise.NOISY` under noise.

    An item lost with its worker (a method that crashed it, or hung where the
    soft limit cannot reach) is run again at the end one method at a time,
    so that only the guilty method gets the error row.
    """
    references = StoreReferences(store)

    def write(item: Item, done: Done) -> None:
        if done.new and done.reference is not None:
            references.add(item.workflow, item.machine, done.reference)
        store.write([], done.results)

    return run_work(executor, work, items, write, chunk=chunk)


def auto_chunk(items: int, slots: int) -> int:
    """Items per task: about eight tasks per slot, at most 64 items (bounded loss on a crash)."""
    return max(1, min(64, items // (8 * max(1, slots))))
