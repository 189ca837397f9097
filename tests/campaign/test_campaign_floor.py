"""The floor of a suite: the trivial answers' figures, and the ``hard`` split none of them solves."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solver_helpers import tiny_instances

from peakopt.campaign.floor import (
    TRIVIAL,
    describe,
    every_pair,
    floor_rows,
    hard_pairs,
    solves,
    suite_floor,
    trivial_starts,
)
from peakopt.models import Machine, Schedule, SolveResult, Suite, Task, Workflow
from peakopt.oracle import evaluate, same_time
from peakopt.solver import solve

BOX = Machine(name="box", capacity={"memory_mb": 1000.0})
ROOMY = Machine(name="roomy", capacity={"memory_mb": 4000.0})

#: Two steps side by side: fit on roomy (zero and asap optimal), not on box (serial is).
SIDE = Workflow(
    id="side",
    tasks=(
        Task(id="a", duration=2.0, demand={"memory_mb": 800.0}),
        Task(id="b", duration=3.0, demand={"memory_mb": 800.0}),
    ),
)
#: A fan where the best order staggers the heavy steps: no trivial answer is optimal on box.
FAN = Workflow(
    id="fan",
    tasks=(
        Task(id="p", duration=1.0, demand={"memory_mb": 100.0}),
        Task(id="h1", duration=4.0, demand={"memory_mb": 700.0}, depends_on=("p",)),
        Task(id="h2", duration=2.0, demand={"memory_mb": 600.0}, depends_on=("p",)),
        Task(id="l", duration=2.0, demand={"memory_mb": 200.0}, depends_on=("p",)),
    ),
)


def references(suite: Suite) -> dict[tuple[str, str | None], SolveResult]:
    found: dict[tuple[str, str | None], SolveResult] = {}
    for workflow, machine in every_pair(suite):
        result = solve(workflow, machine, time_limit=10)
        assert result.status == "optimal"
        found[(workflow.id, machine.name)] = result
    return found


def test_the_floor_of_a_small_suite_by_hand() -> None:
    suite = Suite(workflows=(SIDE, FAN), machines=(BOX, ROOMY))
    refs = references(suite)
    found = suite_floor(suite, refs)
    lines = {line.answer: line for line in found.lines}
    assert list(lines) == list(TRIVIAL) and found.pairs == 4
    # zero: valid only for side (no edges), safe only on roomy, where it is the optimum (3 s)
    assert (lines["zero"].optimal, lines["zero"].safe) == (1, 1)
    # serial: side on box (2 + 3 = 5 = its optimum); always safe
    assert (lines["serial"].optimal, lines["serial"].safe) == (1, 4)
    # asap: side on roomy and fan on roomy fit; fan on box overflows (h1 + h2 = 1300)
    assert lines["asap"].optimal == 2 and lines["asap"].safe == 2
    assert found.hard == frozenset({("fan", "box")}) and found.trivial == 3
    assert hard_pairs(suite, refs) == found.hard
    # efficiencies are the mean over the four proven pairs: serial on fan/box is 9 s against 7 s...
    serial = [
        evaluate(w, m, Schedule(workflow=w.id, machine=m.name, starts=trivial_starts(w, m)["serial"]))
        for w, m in every_pair(suite)
    ]
    optima = [refs[(s.workflow, s.machine)].makespan for s in serial]
    by_hand = sum(o / s.makespan for o, s in zip(optima, serial, strict=True) if o is not None) / 4
    assert None not in optima
    assert lines["serial"].efficiency is not None and abs(lines["serial"].efficiency - by_hand) < 1e-12
    assert lines["zero"].efficiency == 0.25  # 1 on side/roomy, 0 (invalid or unsafe) elsewhere
    text = describe(found)
    assert text[0].startswith("trivial answers: 3 of 4 pairs") and text[0].endswith("hard split: 1 pair")
    assert any(line.strip().startswith("asap") and "optimal on 2 (50.0%)" in line for line in text)


def test_a_pair_without_a_proven_optimum_is_trivial_only_at_its_lower_bound() -> None:
    suite = Suite(workflows=(SIDE,), machines=(BOX,))
    [row] = [r for r in floor_rows(suite, {}) if r.source == "trivial:serial"]
    bound = SolveResult(workflow="side", machine="box", status="feasible", makespan=6.0, lower_bound=5.0)
    low = bound.model_copy(update={"lower_bound": 4.0})
    assert solves(row, bound) and not solves(row, low) and not solves(row, None)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tiny_instances(max_tasks=5), data=st.data())
def test_no_pair_of_the_hard_split_is_solved_by_a_trivial_answer(
    case: tuple[Workflow, Machine], data: st.DataObject
) -> None:
    workflow, machine = case
    suite = Suite(workflows=(workflow,), machines=(machine,))
    refs = references(suite)
    optimum = refs[(workflow.id, machine.name)].makespan
    assert optimum is not None
    # the oracle on each trivial answer, independently of the floor's own scoring
    optimal = []
    for answer, starts in trivial_starts(workflow, machine).items():
        score = evaluate(
            workflow, machine, Schedule(workflow=workflow.id, machine=machine.name, starts=starts)
        )
        optimal.append(
            score.valid and score.safe and (score.makespan <= optimum or same_time(score.makespan, optimum))
        )
        assert answer in TRIVIAL
    hard = hard_pairs(suite, refs)
    assert (hard == frozenset({(workflow.id, machine.name)})) is (not any(optimal))
