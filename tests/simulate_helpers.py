"""Test helpers for the simulator: realised workflows, and an independent unit-grid simulation."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from hypothesis import strategies as st

from peakopt.models import Edge, Machine, Schedule, Segment, Task, Workflow
from peakopt.oracle import measure
from peakopt.oracle.judge.metrics import avoidable_cva, dependency_violations


def realise(workflow: Workflow, factors: Sequence[float], scales: Sequence[float] | None = None) -> Workflow:
    """``workflow`` with each task's segments stretched by its factor (and demands by its scale)."""
    tasks = []
    for k, (task, factor) in enumerate(zip(workflow.tasks, factors, strict=True)):
        scale = 1.0 if scales is None else scales[k]
        profile = tuple(
            Segment(duration=s.duration * factor, demand={r: a * scale for r, a in s.demand.items()})
            for s in task.segments
        )
        tasks.append(task.model_copy(update={"profile": profile, "duration": None, "demand": None}))
    return workflow.model_copy(update={"tasks": tuple(tasks)})


def factors(workflow: Workflow, spread: float = 0.5) -> st.SearchStrategy[list[float]]:
    """Per-task duration factors in [1 - spread, 1 + spread]."""
    return st.lists(
        st.floats(min_value=1 - spread, max_value=1 + spread, allow_nan=False),
        min_size=len(workflow.tasks),
        max_size=len(workflow.tasks),
    )


def verdict(workflow: Workflow, machine: Machine, schedule: Schedule) -> tuple[float, int]:
    """(avoidable cva, dependency violations) of ``schedule`` on ``workflow`` as the oracle measures them."""
    measured = measure(workflow, machine, schedule.starts)
    return avoidable_cva(measured), dependency_violations(measured)


def clamped_peak(task: Task, machine: Machine | None) -> dict[str, float]:
    """A task's peak demand per limited resource, clamped to the capacity (zero-length phases use nothing)."""
    capacity = machine.capacity if machine is not None else {}
    peak: dict[str, float] = {}
    for segment in task.segments:
        if segment.duration > 0:
            for r, amount in segment.demand.items():
                if r in capacity and amount > 0:
                    peak[r] = max(peak.get(r, 0.0), min(amount, capacity[r]))
    return peak


#: ``choose(t, ready, running, free) -> ids to start`` for the grid simulation; ``ready`` in the
#: order the steps became ready (ties in workflow order).
Chooser = Callable[[int, list[str], dict[str, int], dict[str, float]], list[str]]


def grid(
    workflow: Workflow,
    machine: Machine | None,
    lengths: Sequence[int],
    choose: Chooser,
    *,
    extra: Sequence[Edge] = (),
) -> dict[str, int]:
    """Unit-time-step simulation on integer data, written without the simulator's event logic.

    At every integer instant: finish what ends, then repeatedly offer the ready steps (every
    predecessor under the dependencies plus ``extra`` finished, not started) to ``choose`` until
    it starts nothing more (zero-length steps finish at once and release others).
    """
    length = {t.id: lengths[k] for k, t in enumerate(workflow.tasks)}
    preds = {t.id: set(t.depends_on) for t in workflow.tasks}
    for a, b in extra:
        preds[b].add(a)
    peaks = {t.id: clamped_peak(t, machine) for t in workflow.tasks}
    capacity = dict(machine.capacity) if machine is not None else {}
    position = workflow.index
    start: dict[str, int] = {}
    seen: dict[str, tuple[int, int, int]] = {}
    now = 0
    while len(start) < len(length):
        for round_ in range(len(length) + 1):
            done = {s for s, at in start.items() if at + length[s] <= now}
            running = {s: at for s, at in start.items() if s not in done}
            for s in length:
                if s not in start and s not in seen and preds[s] <= done:
                    seen[s] = (now, round_, position[s])
            ready = sorted((s for s in seen if s not in start), key=seen.__getitem__)
            free = {r: c - sum(peaks[s].get(r, 0.0) for s in running) for r, c in capacity.items()}
            chosen = choose(now, ready, running, free)
            if not chosen:
                break
            for step in chosen:
                assert step in ready
                start[step] = now
        now += 1
        assert now < 10_000, "the grid simulation does not end"
    return start


class Counting:
    """A stateful online policy (one step at a time) that fails if it is reused for a second run."""

    built = 0

    def __init__(self, workflow: Workflow, machine: Machine | None) -> None:
        Counting.built += 1
        self.calls = 0
        self.size = len(workflow.tasks)

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """The first ready step when nothing runs."""
        self.calls += 1
        assert self.calls <= 2 * self.size + 1, "state leaked from an earlier run"
        return ready[:1] if not running else ()


def one_after_another(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
    """A plug-in heuristic without an online form: every step in workflow order, one after another."""
    now, starts = 0.0, {}
    for task in workflow.tasks:
        starts[task.id], now = now, now + task.length
    return starts


def declared(workflow: Workflow, machine: Machine | None) -> dict[str, float]:
    """A plug-in heuristic that declares its online form (its ``online`` attribute)."""
    return one_after_another(workflow, machine)


declared.online = Counting  # type: ignore[attr-defined]
