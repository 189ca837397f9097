"""Online forms of the methods and the online interface: reproduction, safety, errors, fresh instances."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from simulate_helpers import Chooser, Counting, clamped_peak, factors, grid, realise, verdict
from strategies import machines, workflows

from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle.uncertain.dispatch import SimulationError
from peakopt.oracle.uncertain.online import OnlinePolicy
from peakopt.oracle.uncertain.simulate import Simulation, execute
from peakopt.solver.heuristics import MachineNeeded, run
from peakopt.solver.heuristics.arrays import compile_problem
from peakopt.solver.heuristics.online import online_policy, policy_factory
from peakopt.solver.heuristics.rules import RULE_NAMES, rule_keys

#: The methods that are themselves online dispatchers: their online form is the method.
DISPATCHERS = ["asap", "serial", "cap:1", "cap:2", "cap:3", "admission", "admission:strict"] + [
    f"sgs:parallel:{rule}" for rule in RULE_NAMES if rule != "random"
]
#: Methods that plan offline: online they run their nominal plan's order.
PLANNERS = [
    "sgs:serial:lft",
    "sgs:serial:random",
    "best-rule",
    "fbi:sgs:serial:lst",
    "sampling:5",
    "best:fast",
]


def _starts(
    workflow: Workflow, machine: Machine | None, method: str, lengths: Sequence[float] | None = None
) -> dict[str, float]:
    lengths = [t.length for t in workflow.tasks] if lengths is None else lengths
    got = Simulation(workflow, machine, factory=policy_factory(method, seed=4)).run(lengths)
    return dict(zip(workflow.index, got, strict=True))


@given(workflows(), machines(), st.sampled_from([m for m in DISPATCHERS if not m.startswith("sgs")]))
def test_a_dispatching_method_online_is_its_offline_schedule(
    workflow: Workflow, machine: Machine, method: str
) -> None:
    assert _starts(workflow, machine, method) == run(workflow, machine, method).starts


@given(
    workflows(integer=True, piecewise=False),
    machines(integer=True),
    st.sampled_from([*DISPATCHERS[7:], "sgs:parallel:random"]),
)
def test_parallel_sgs_online_is_its_offline_schedule_for_constant_profiles(
    workflow: Workflow, machine: Machine, method: str
) -> None:
    # with piecewise profiles the offline pass packs by segment while the online form holds
    # peaks; and offline, an overlap shorter than the heuristics' time tolerance (a step of
    # 1e-166 s) is not an overlap, so integer data
    assert _starts(workflow, machine, method) == run(workflow, machine, method, seed=4).starts


@given(workflows(integer=True, piecewise=False), machines(integer=True), st.sampled_from(PLANNERS))
def test_a_planner_online_never_falls_behind_its_plan(
    workflow: Workflow, machine: Machine, method: str
) -> None:
    plan = run(workflow, machine, method, seed=4)
    online = _starts(workflow, machine, method)
    assert all(online[s] <= plan.starts[s] for s in online)
    assert verdict(workflow, machine, Schedule(workflow="w", starts=online)) == (0.0, 0)


def _grid_form(workflow: Workflow, machine: Machine, method: str) -> Chooser:
    """The method's online rule written again, on the grid simulation's ids and dicts."""
    peaks = {t.id: clamped_peak(t, machine) for t in workflow.tasks}
    head, _, rest = method.partition(":")
    keys: dict[str, float] | None = None
    if head == "sgs":
        problem = compile_problem(workflow, machine)
        keys = dict(zip(problem.ids, rule_keys(problem, rest.partition(":")[2]), strict=True))

    def choose(now: int, ready: list[str], running: dict[str, int], free: dict[str, float]) -> list[str]:
        if head == "asap":
            return ready
        if head in ("serial", "cap"):
            room = (1 if head == "serial" else int(rest)) - len(running)
            pool = sorted(ready, key=workflow.index.__getitem__) if head == "serial" else ready
            return pool[: max(room, 0)]
        queue = ready if keys is None else sorted(ready, key=lambda s: (keys[s], workflow.index[s]))
        left, chosen = dict(free), []
        for step in queue:
            if all(left[r] >= a for r, a in peaks[step].items()):
                for r, a in peaks[step].items():
                    left[r] -= a
                chosen.append(step)
            elif rest == "strict":
                break
        return chosen

    return choose


@given(workflows(integer=True), machines(integer=True), st.sampled_from(DISPATCHERS), st.data())
def test_online_forms_match_a_unit_grid_simulation(
    workflow: Workflow, machine: Machine, method: str, data: st.DataObject
) -> None:
    lengths = data.draw(
        st.lists(st.integers(0, 8), min_size=len(workflow.tasks), max_size=len(workflow.tasks))
    )
    assert _starts(workflow, machine, method, lengths) == grid(
        workflow, machine, lengths, _grid_form(workflow, machine, method)
    )


@given(
    workflows(piecewise=True),
    machines(),
    st.sampled_from(["admission", "admission:strict", *PLANNERS[:2]]),
    st.data(),
)
def test_admission_forms_never_overflow_an_avoidable_capacity(
    workflow: Workflow, machine: Machine, method: str, data: st.DataObject
) -> None:
    realised = realise(workflow, data.draw(factors(workflow, spread=0.9)))
    done = execute(realised, machine, factory=policy_factory(method), nominal=workflow)
    avoidable, broken = verdict(realised, machine, done)
    assert broken == 0
    assert avoidable == pytest.approx(0.0, abs=1e-9)


MACHINE = Machine(name="m", capacity={"cpu": 2.0, "gpu": 1.0})
FLOW = Workflow(
    id="w",
    tasks=(
        Task(id="a", duration=1.0, demand={"cpu": 1.0}),
        Task(id="b", duration=2.0, demand={"cpu": 2.0}),
        Task(id="c", duration=1.0, demand={"cpu": 1.0}, depends_on=("a",)),
    ),
)


def _run(policy: object) -> Schedule:
    return execute(FLOW, MACHINE, policy)  # type: ignore[arg-type]


def test_a_policy_sees_the_clock_the_ready_and_running_steps_and_the_free_capacity() -> None:
    calls: list[tuple[float, list[str], dict[str, float], dict[str, float]]] = []

    def one_by_one(
        now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        calls.append((now, list(ready), dict(running), dict(free)))
        return ready[:1] if not running else ()

    assert _run(one_by_one).starts == {"a": 0.0, "b": 1.0, "c": 3.0}
    assert calls[0] == (0.0, ["a", "b"], {}, {"cpu": 2.0, "gpu": 1.0})
    assert calls[1] == (1.0, ["b", "c"], {}, {"cpu": 2.0, "gpu": 1.0})


def test_a_policy_that_starts_a_step_not_ready_is_named_with_the_step_and_time() -> None:
    with pytest.raises(
        SimulationError, match=r"policy 'eager' started step 'c' at time 0, but it is not ready"
    ):
        _run(_named("eager", lambda now, ready, running, free: ["c"]))
    with pytest.raises(SimulationError, match=r"started 'zz' at time 0: not a step"):
        _run(_named("typo", lambda now, ready, running, free: ["zz"]))
    with pytest.raises(SimulationError, match=r"started step 'a' twice at time 0"):
        _run(_named("twice", lambda now, ready, running, free: ["a", "a"]))
    with pytest.raises(
        SimulationError, match=r"policy 'boom' raised ZeroDivisionError: division by zero at time 0"
    ):
        _run(_named("boom", lambda now, ready, running, free: [1 / 0]))


def test_a_policy_that_starts_nothing_while_nothing_runs_has_stalled() -> None:
    def idle(
        now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        return ready[:1] if now == 0 else ()

    with pytest.raises(
        SimulationError, match=r"policy 'idle' stalled at time 1: nothing runs, steps 'b', 'c' are ready"
    ):
        _run(idle)


def _named(name: str, func: object) -> object:
    func.__name__ = name  # type: ignore[attr-defined]
    return func


def test_a_factory_builds_a_fresh_policy_for_every_run() -> None:
    simulation = Simulation(FLOW, MACHINE, factory=Counting)
    before = Counting.built
    first = simulation.run([1.0, 2.0, 1.0])
    assert simulation.run([1.0, 2.0, 1.0]) == first
    assert Counting.built - before == 2


def test_a_plugin_declares_its_online_form_or_runs_its_plan_order() -> None:
    before = Counting.built
    policy = online_policy("simulate_helpers:declared", FLOW, MACHINE)
    assert isinstance(policy, Counting) and Counting.built == before + 1
    plain = execute(FLOW, MACHINE, factory=policy_factory("simulate_helpers:one_after_another"))
    assert plain.starts == {"a": 0.0, "b": 1.0, "c": 3.0}


def test_a_resource_aware_method_needs_a_machine_and_a_bad_name_fails_at_once() -> None:
    with pytest.raises(MachineNeeded):
        online_policy("admission", FLOW, None)
    assert execute(FLOW, None, factory=policy_factory("asap")).starts == {"a": 0.0, "b": 0.0, "c": 1.0}
    with pytest.raises(Exception, match="unknown method"):
        policy_factory("nope")


@given(workflows(), machines(), st.sampled_from([*DISPATCHERS, *PLANNERS[:2]]))
def test_the_id_form_a_runtime_calls_decides_as_the_fast_path(
    workflow: Workflow, machine: Machine, method: str
) -> None:
    fast = _starts(workflow, machine, method)

    def as_a_runtime_calls_it(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
        policy = online_policy(method, workflow, machine, seed=4)
        return lambda now, ready, running, free: policy(now, ready, running, free)

    lengths = [t.length for t in workflow.tasks]
    slow = Simulation(workflow, machine, factory=as_a_runtime_calls_it).run(lengths)
    assert dict(zip(workflow.index, slow, strict=True)) == fast


@given(workflows(), machines(), st.sampled_from(PLANNERS[:2]))
def test_a_planner_plans_once_and_its_order_starts_fresh_in_every_run(
    workflow: Workflow, machine: Machine, method: str
) -> None:
    simulation = Simulation(workflow, machine, factory=policy_factory(method))
    lengths = [t.length * 1.3 for t in workflow.tasks]
    assert simulation.run(lengths) == simulation.run(lengths)
