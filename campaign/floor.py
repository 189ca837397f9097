"""The floor of a suite: what the trivial answers already earn, and the ``hard`` split without them.

A benchmark whose pairs a trivial answer solves optimally flatters every model that finds that
answer. Three answers need no thought at all:

- ``zero``: every step at time 0 (valid only without dependencies; optimal whenever it fits);
- ``serial``: one step at a time in topological order (always valid and safe);
- ``asap``: every step at its earliest start, resources ignored (the critical-path schedule;
  optimal whenever it fits).

Each is scored as a model's answer is (:func:`peakopt.oracle.tables.score_rows.score_record`),
against the same references: :func:`floor_rows` gives the rows (source ``trivial:zero``...),
which tables and reports show beside the models', and :func:`floor` the share of pairs each
answer solves optimally. A pair is *trivial* when one of them is optimal: its proven optimum, or
for a pair whose optimum is not proven, a makespan at its lower bound. The ``hard`` split is
every other pair (:func:`hard_pairs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from peakopt.instances.names import SPLITS as SPLITS
from peakopt.models import Machine, SolveResult, Suite, Workflow
from peakopt.oracle import ScoreRow, same_time, score_record
from peakopt.oracle.judge.metrics import charged_makespan
from peakopt.solver.heuristics import run

#: The trivial answers, by name: what each is.
TRIVIAL: dict[str, str] = {
    "zero": "every step at time 0",
    "serial": "one step at a time",
    "asap": "every step at its earliest start, resources ignored",
}

#: The source of a trivial answer's rows: ``trivial:zero``...
SOURCE = "trivial:"


#: (workflow id, machine name): how the floor names a pair.
Pair = tuple[str, str]


def trivial_starts(workflow: Workflow, machine: Machine) -> dict[str, dict[str, float]]:
    """The start times of each trivial answer (see :data:`TRIVIAL`) of ``workflow`` on ``machine``."""
    return {
        "zero": dict.fromkeys(workflow.index, 0.0),
        "serial": dict(run(workflow, machine, "serial").starts),
        "asap": dict(run(workflow, machine, "asap").starts),
    }


def floor_rows(
    suite: Suite,
    references: Mapping[tuple[str, str | None], SolveResult],
    pairs: Iterable[tuple[Workflow, Machine]] | None = None,
) -> list[ScoreRow]:
    """Every trivial answer of ``pairs`` of ``suite`` scored against ``references``.

    Rows come pair by pair (by default every pair: workflows, then machines, in the suite's
    order), one per answer in the order of :data:`TRIVIAL`; their source is ``trivial:<answer>``.
    """
    rows = []
    for workflow, machine in every_pair(suite) if pairs is None else pairs:
        for answer, starts in trivial_starts(workflow, machine).items():
            record = {"workflow": workflow.id, "machine": machine.name, "source": SOURCE + answer}
            rows.append(score_record(record | {"starts": starts}, suite, references))
    return rows


def solved_references(
    suite: Suite, pairs: Sequence[tuple[Workflow, Machine]] | None = None, time_limit: float = 10.0
) -> dict[tuple[str, str | None], SolveResult]:
    """A reference for each of ``pairs`` (every pair by default), solved here: one thread, seed 0."""
    # here: the split's name and the floor's figures need no OR-Tools (the Inspect task's arguments)
    from peakopt.solver import solve

    chosen = every_pair(suite) if pairs is None else pairs
    return {(w.id, m.name): solve(w, m, time_limit=time_limit, workers=1, seed=0) for w, m in chosen}


def every_pair(suite: Suite) -> list[tuple[Workflow, Machine]]:
    """Every workflow × machine of ``suite``, workflow by workflow."""
    return [(w, m) for w in suite.workflows for m in suite.machines]


def solves(row: ScoreRow, reference: SolveResult | None) -> bool:
    """Whether a scored answer is optimal: safe at the proven optimum, or at the lower bound."""
    if not (row.valid and row.safe) or row.makespan is None or reference is None:
        return False
    if reference.status == "optimal" and reference.makespan is not None:
        best = reference.makespan
    elif reference.lower_bound is not None:
        best = reference.lower_bound
    else:
        return False
    # on a soft resource an overflow slows the answer down: it is charged its slowed makespan
    soft_overflow = (row.avoidable_cva_soft or 0.0) > 0
    charged = charged_makespan(row.makespan, row.slowed_makespan, reference, soft_overflow)
    return charged <= best or same_time(charged, best)


@dataclass(frozen=True)
class FloorLine:
    """What one trivial answer earns on a suite.

    Parameters
    ----------
    answer
        Its name (a key of :data:`TRIVIAL`).
    pairs
        The pairs it was scored on.
    optimal
        Those it solves optimally (:func:`solves`).
    safe
        Those where it is valid and safe.
    efficiency
        Its mean efficiency over the pairs with a proven optimum (None without any).
    """

    answer: str
    pairs: int
    optimal: int
    safe: int
    efficiency: float | None

    @property
    def share(self) -> float:
        """The share of the pairs it solves optimally."""
        return self.optimal / self.pairs if self.pairs else 0.0


@dataclass(frozen=True)
class Floor:
    """The floor of a suite: one line per trivial answer, and the pairs none of them solves."""

    lines: tuple[FloorLine, ...]
    pairs: int
    hard: frozenset[Pair]

    @property
    def trivial(self) -> int:
        """The pairs some trivial answer solves optimally."""
        return self.pairs - len(self.hard)


def floor(
    rows: Iterable[ScoreRow],
    references: Mapping[tuple[str, str | None], SolveResult],
    pairs: Sequence[Pair],
) -> Floor:
    """The floor over ``pairs`` from the trivial answers' ``rows`` (:func:`floor_rows`)."""
    wanted = set(pairs)
    by_answer: dict[str, list[ScoreRow]] = {answer: [] for answer in TRIVIAL}
    solved: set[Pair] = set()
    for row in rows:
        pair = (str(row.workflow), str(row.machine))
        source = row.source or ""
        if pair not in wanted or not source.startswith(SOURCE):
            continue
        by_answer[source.removeprefix(SOURCE)].append(row)
        if solves(row, references.get(pair)):
            solved.add(pair)
    lines = []
    for answer, found in by_answer.items():
        figures = [r.efficiency for r in found if r.efficiency is not None]
        lines.append(
            FloorLine(
                answer,
                len(found),
                sum(solves(r, references.get((str(r.workflow), str(r.machine)))) for r in found),
                sum(r.valid and r.safe for r in found),
                sum(figures) / len(figures) if figures else None,
            )
        )
    return Floor(tuple(lines), len(wanted), frozenset(wanted - solved))


def suite_floor(
    suite: Suite,
    references: Mapping[tuple[str, str | None], SolveResult],
    pairs: Sequence[tuple[Workflow, Machine]] | None = None,
) -> Floor:
    """The floor of ``pairs`` of ``suite`` (every pair by default) against ``references``."""
    chosen = every_pair(suite) if pairs is None else pairs
    rows = floor_rows(suite, references, chosen)
    return floor(rows, references, [(w.id, m.name) for w, m in chosen])


def hard_pairs(
    suite: Suite,
    references: Mapping[tuple[str, str | None], SolveResult],
    pairs: Sequence[tuple[Workflow, Machine]] | None = None,
) -> frozenset[Pair]:
    """The pairs (of ``pairs``, every pair by default) no trivial answer solves: the ``hard`` split."""
    return suite_floor(suite, references, pairs).hard


def describe(found: Floor) -> list[str]:
    """The floor as lines of text, for ``generate``, ``validate --stats`` and the report."""

    def pairs(n: int) -> str:
        return f"{n} pair{'s' * (n != 1)}"

    lines = [
        f"trivial answers: {found.trivial} of {pairs(found.pairs)} solved optimally by one of them; "
        f"hard split: {pairs(len(found.hard))}"
    ]
    for line in found.lines:
        earned = "-" if line.efficiency is None else f"{line.efficiency:.3f}"
        lines.append(
            f"  {line.answer:<6} ({TRIVIAL[line.answer]}): optimal on {line.optimal} "
            f"({line.share:.1%}), safe on {line.safe}, efficiency {earned}"
        )
    return lines


@dataclass(frozen=True)
class Redrawn:
    """What :func:`redraw_trivial` made: the suite, its floor, and what it took."""

    suite: Suite
    floor: Floor
    redrawn: int
    reached: bool


def redraw_trivial(
    suite: Suite,
    target: float,
    *,
    redraw: Callable[[Workflow, int], Workflow],
    attempts: int = 20,
    time_limit: float = 10.0,
    references: dict[tuple[str, str | None], SolveResult] | None = None,
) -> Redrawn:
    """Redraw the workflows trivial answers solve until at most ``target`` of the pairs are trivial.

    The machines stay those of ``suite`` (a redraw changes no capacity). The workflow with the
    most trivial pairs goes first: of up to ``attempts`` redraws (``redraw(workflow, k)``,
    ``k`` = 1, 2...), the one with the fewest trivial pairs replaces it when it has fewer; then
    the next, until the share is at most ``target`` or every workflow was tried. Each pair is
    solved (``time_limit`` seconds, one thread, seed 0) to know its optimum.

    Parameters
    ----------
    suite
        The suite as drawn.
    target
        The highest share of trivial pairs wanted, in [0, 1].
    redraw
        Another workflow of the same tier and id (the generator's ``redraw_workflow``).
    attempts
        Redraws tried per workflow.
    time_limit
        Seconds per reference solve.
    references
        Filled with every reference solved (by workflow id and machine name), if given.

    Returns
    -------
    Redrawn
        ``reached`` False when the share stayed above ``target``: a machine that every drawn
        workflow of a tier fits makes ASAP optimal there, whatever is redrawn.
    """
    known: dict[tuple[str, str | None], SolveResult] = {} if references is None else references
    machines = suite.machines

    def judged(workflow: Workflow) -> tuple[int, dict[tuple[str, str | None], SolveResult]]:
        """How many of the workflow's pairs are trivial, and its references."""
        single = Suite(workflows=(workflow,), machines=machines)
        refs = solved_references(single, time_limit=time_limit)
        return len(machines) - len(hard_pairs(single, refs)), refs

    workflows = list(suite.workflows)
    counts = []
    for workflow in workflows:
        count, refs = judged(workflow)
        counts.append(count)
        known.update(refs)
    pairs = len(workflows) * len(machines)
    redrawn = 0
    for index in sorted(range(len(workflows)), key=lambda i: -counts[i]):
        if sum(counts) <= target * pairs or counts[index] == 0:
            break
        best: tuple[Workflow, int, dict[tuple[str, str | None], SolveResult]] | None = None
        for attempt in range(1, attempts + 1):
            candidate = redraw(workflows[index], attempt)
            count, refs = judged(candidate)
            if count < (counts[index] if best is None else best[1]):
                best = (candidate, count, refs)
            if best is not None and best[1] == 0:
                break
        if best is not None:
            workflows[index], counts[index] = best[0], best[1]
            known.update(best[2])
            redrawn += 1
    record = {"target": target, "redrawn": redrawn, "attempts": attempts}
    meta = dict(suite.meta) | {"trivial_redrawn": record}
    hardened = Suite(workflows=tuple(workflows), machines=machines, meta=meta)
    found = suite_floor(hardened, known)
    return Redrawn(hardened, found, redrawn, found.trivial <= target * pairs)
