"""The admission controller: runs a workflow's real steps on this machine under a machine's capacities.

:class:`Controller` (asyncio) starts the steps with no predecessor, and at the start and whenever
a step ends it asks an :class:`~peakopt.oracle.uncertain.online.OnlinePolicy` which ready steps to start
(the same interface the oracle's simulator runs: a method's online form, a plan's order, a
plug-in). Then it **guards** the answer: a step starts only if its clamped peak demand fits the
free capacity (:func:`peakopt.oracle.uncertain.dispatch.admitted`: the capacity the running steps hold at
their clamped peaks for their whole run), so no admitted set of steps ever exceeds a capacity,
whatever the policy says; a step over a capacity on its own is clamped to it and so runs alone
on that resource. Steps the guard holds back stay ready for the next event. ``guard=False``
trusts the policy (to measure what an unguarded runtime does).

The policy is asked, and its answer checked, as the simulator does
(:func:`peakopt.oracle.uncertain.policies.online_decider`). A policy that raises, answers something that
is not a list of ready step ids, or stalls (nothing runs, steps are ready and it starts none)
is a **fault**: no further step starts, the running ones finish, the rest are skipped, and the
trace (status ``failed``) records it in ``error``.

A failing step (non-zero exit, a signal, an exception) is recorded; then, with
``on_failure="continue"`` (the default, like ``make -k``), the steps that depend on it, directly
or not, are skipped and the others go on; with ``"stop"``, no further step starts, the running
ones finish, and the rest are skipped. A policy with a ``skip(steps)`` method is told which steps
a failure skipped (a plan's order then passes over them instead of waiting for steps that will
never be ready). Cancelling the run (Ctrl-C) ends every running step's
process tree before the cancellation goes through. A controller that dies without a clean-up
(SIGKILL, the OOM killer) takes its steps with it too: before its first subprocess it starts a
:class:`~peakopt.runtime.reaper.Reaper`, which ends every process of the run's steps once the
controller is gone (and, at a normal end, whatever a step left running in the background).

With ``replan`` (a :class:`~peakopt.runtime.replan.Replan`), a step that runs longer than
planned by more than its threshold makes the controller re-plan the rest around what has run
and go on in the new plan's order (:mod:`peakopt.runtime.replan`); the guard holds either way.

The result is a :class:`~peakopt.runtime.trace.Trace`. What an ok async-callable step returned,
when that is not an exit code (a tool call's dict, a string; see :mod:`peakopt.runtime.steps`),
is kept in :attr:`Controller.results` by step id (None for a step that returned nothing).
"""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import Callable, Mapping

from peakopt.models import Machine, PeakoptError, Workflow
from peakopt.oracle.base.instants import same_instant
from peakopt.oracle.uncertain.dispatch import Decider, SimulationError, admitted, constrained, peak_needs
from peakopt.oracle.uncertain.online import OnlinePolicy
from peakopt.oracle.uncertain.policies import online_decider
from peakopt.runtime.limits import LimitMode, limiter
from peakopt.runtime.names import COMMAND_KEY, OnFailure
from peakopt.runtime.overuse import OveruseWatch, measured_demand
from peakopt.runtime.reaper import Reaper
from peakopt.runtime.replan import OVERRUN_GUESS, Moment, Replan, RestOfPlan, record, replan, warm
from peakopt.runtime.steps import KILL_GRACE, Step, StepOutcome, run_step
from peakopt.runtime.trace import PLACES, ReplanRecord, StepRecord, Trace


class ControllerError(PeakoptError):
    """A run that cannot be controlled: a step without a command, a planned policy without a plan."""


def commands(workflow: Workflow, given: Mapping[str, Step] | None = None) -> dict[str, Step]:
    """What each step runs: ``given[id]``, else the task's ``meta.command`` (a string or a list of strings).

    Raises
    ------
    ControllerError
        Naming the steps that have neither.
    """
    given = dict(given or {})
    found: dict[str, Step] = {}
    missing = []
    for task in workflow.tasks:
        step = given.get(task.id, task.meta.get(COMMAND_KEY))
        if isinstance(step, list) and step and all(isinstance(a, str) for a in step):
            step = tuple(step)
        if not (callable(step) or (isinstance(step, str | tuple) and step)):
            missing.append(task.id)
        else:
            found[task.id] = step
    if missing:
        listed = ", ".join(repr(m) for m in missing)
        raise ControllerError(
            f"workflow {workflow.id!r}: step{'s' * (len(missing) > 1)} {listed} "
            f"{'have' if len(missing) > 1 else 'has'} no command (give meta.{COMMAND_KEY}: a shell line "
            "or a list of arguments)"
        )
    return found


class Controller:
    """Runs ``workflow``'s steps under ``machine``'s capacities, in the order ``policy`` picks.

    Parameters
    ----------
    workflow, machine
        The steps (their declared demands are what the guard holds) and the capacities.
    policy
        Which ready steps to start (a fresh one: it may be stateful).
    steps
        Id -> what the step runs (see :func:`commands`); by default each task's ``meta.command``.
    name
        The policy's name, for the trace and the messages.
    guard
        Start only steps whose clamped peak demand fits (the default); False trusts the policy.
    on_failure
        ``continue`` or ``stop`` (see the module docstring).
    measure, interval
        Sample each subprocess's tree every ``interval`` seconds and record its usage; a step
        measured above its declaration is reported at once (see :mod:`peakopt.runtime.overuse`).
    progress
        Called with one line per event (a step started or ended, a re-plan).
    warn
        Called with one line per excess of a measured step over its declaration (step, resource,
        declared and measured); None: an :class:`~peakopt.runtime.overuse.OverDeclared` warning.
    limit_memory
        Run each subprocess step that declares ``memory_mb`` under a hard limit at it (``auto``,
        ``cgroup`` or ``rlimit``; see :mod:`peakopt.runtime.limits`); None: no limit.
    replan
        Re-plan when a step overruns (see :mod:`peakopt.runtime.replan`); None never re-plans.
    """

    def __init__(
        self,
        workflow: Workflow,
        machine: Machine,
        policy: OnlinePolicy,
        steps: Mapping[str, Step] | None = None,
        *,
        name: str = "policy",
        guard: bool = True,
        on_failure: OnFailure = "continue",
        measure: bool = False,
        interval: float = 0.1,
        progress: Callable[[str], None] | None = None,
        replan: Replan | None = None,
        warn: Callable[[str], None] | None = None,
        limit_memory: LimitMode | None = None,
    ) -> None:
        self.workflow, self.machine, self.policy, self.name = workflow, machine, policy, name
        self.steps = commands(workflow, steps)
        self.guard, self.on_failure, self.measure, self.interval = guard, on_failure, measure, interval
        self.progress = progress or (lambda line: None)
        self.warn = warn
        self.limiter = limiter(limit_memory) if limit_memory is not None else None
        self.resources, self.capacity = constrained(workflow, machine)
        where = {r: k for k, r in enumerate(self.resources)}
        self.needs = [peak_needs(t, where, self.capacity) for t in workflow.tasks]
        self.index = workflow.index
        self.replan = replan
        if replan is not None:
            warm()
        # the run time each step is expected to take: declared, until a re-plan assumes longer
        self.planned = {t.id: t.length for t in workflow.tasks}
        self.replans: list[ReplanRecord] = []
        #: what each ok callable step returned (its result: not an exit code), by step id, for the last run
        self.results: dict[str, object] = {}
        self._asked: tuple[OnlinePolicy, Decider] | None = None

    async def run(self) -> Trace:
        """Run every step (see the module docstring); cancelling ends the running steps' processes first."""
        wall = datetime.datetime.now(datetime.UTC).isoformat()
        state = _State(self.workflow, time.monotonic(), len(self.capacity))
        state.free = list(self.capacity)
        running: dict[asyncio.Task[StepOutcome], str] = {}
        self.results = {}
        self.overuse = OveruseWatch({t.id: t for t in self.workflow.tasks}, self.machine.capacity, self.warn)
        self.reaper = Reaper(KILL_GRACE)
        try:
            while True:
                if state.ready and not state.stopping:
                    self._start(state, running)
                if not running:
                    if state.ready and not state.stopping:
                        self._fault(state, self._stalled(state))
                    break
                timeout = self._until_overrun(state)
                done, _ = await asyncio.wait(running, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    await self._replan(state)
                self._finish_together(state, running, done)
                if state.failed and self.replan is not None and not state.stopping:
                    await self._replan(state)  # the plan's order would wait for the skipped steps
        except BaseException:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise
        finally:
            # after the steps: the reaper then ends only what they left running in the background
            await asyncio.to_thread(self.reaper.close)
        return self._trace(state, wall)

    def _decider(self) -> Decider:
        """The current policy asked as the simulator asks it (its answer checked the same way)."""
        if self._asked is None or self._asked[0] is not self.policy:  # a re-plan changes the policy
            decide = online_decider(
                self.policy, f"policy {self.name!r}", self.workflow, self.machine, self.resources
            )
            self._asked = (self.policy, decide)
        return self._asked[1]

    def _start(self, state: _State, running: dict[asyncio.Task[StepOutcome], str]) -> None:
        now = time.monotonic() - state.t0
        queue = [self.index[s] for s in state.ready]
        holding = {self.index[s]: at for s, at in state.running.items()}
        try:
            positions = list(self._decider()(now, queue, holding, list(state.free)))
        except SimulationError as exc:  # the policy raised or answered wrongly: no more starts
            self._fault(state, str(exc))
            return
        if self.guard:
            positions = admitted(positions, self.needs, state.free, strict=False)
        for j in positions:
            step = self.workflow.tasks[j].id
            for k, amount, _ in self.needs[j]:
                state.free[k] -= amount
            state.ready.remove(step)
            state.starts[step] = state.running[step] = now
            self.progress(f"{now:8.3f}s start {step}")
            command = self.steps[step]
            if not callable(command):
                self.reaper.start()
            watch = self._watch(state, step) if self.measure else None
            declared = self.workflow.tasks[j].peak("memory_mb")
            limit = self.limiter.step(declared) if self.limiter is not None and declared > 0 else None
            work = run_step(
                command,
                measure=self.measure,
                interval=self.interval,
                reaper=self.reaper,
                watch=watch,
                limit=limit,
            )
            running[asyncio.create_task(work)] = step

    def _watch(self, state: _State, step: str) -> Callable[[float], None]:
        """What hears a running step's peak memory: an excess over its declaration is told at once."""

        def heard(peak_mb: float) -> None:
            when = f"at {time.monotonic() - state.t0:.3f} s, while it runs"
            self.overuse.check(step, {"memory_mb": round(peak_mb, 1)}, when)

        return heard

    def _until_overrun(self, state: _State) -> float | None:
        """Seconds until the first running step overruns (None: no re-planning, or nothing can)."""
        if self.replan is None or state.stopping:
            return None
        now = time.monotonic() - state.t0
        due = self.replan.due
        return max(0.0, min(at + due(self.planned[s]) for s, at in state.running.items()) - now)

    async def _replan(self, state: _State) -> None:
        """Re-plan the rest if a step overran or failed (in a thread: the steps' ends are still timed)."""
        assert self.replan is not None
        now = time.monotonic() - state.t0
        due = self.replan.due
        overrun = {
            s: (now - at, self.planned[s])
            for s, at in state.running.items()
            if now - at >= due(self.planned[s])
        }
        failed, state.failed = state.failed, []
        if not (overrun or failed):  # a timer that fired a little early
            return
        lengths = {s: max(self.planned[s], now - at) for s, at in state.running.items()}
        lengths.update({s: ran * OVERRUN_GUESS for s, (ran, _) in overrun.items()})
        ends = {s: r.end for s, r in state.records.items() if r.end is not None}
        moment = Moment(now, dict(state.starts), ends, lengths, frozenset(state.skipped))
        why = ", ".join([f"{s} overran" for s in overrun] + [f"{s} failed" for s in failed])
        began = time.perf_counter()
        try:
            rest, result = await asyncio.to_thread(replan, self.workflow, self.machine, moment, self.replan)
        except PeakoptError as exc:
            self.replans.append(record(now, overrun, began, exc, failed))
            self.progress(f"{now:8.3f}s re-plan failed: {exc}")
        else:
            entry = record(now, overrun, began, (rest, result), failed)
            self.replans.append(entry)
            if entry.plan is not None:
                self.policy = RestOfPlan(self.workflow, self.machine, rest, result, state.starts)
                self.progress(
                    f"{now:8.3f}s re-plan ({why}): makespan {result.makespan:.3f} s, "
                    f"{result.status}, in {entry.seconds * 1000:.0f} ms"
                )
            else:
                self.progress(f"{now:8.3f}s re-plan failed: {result.message}")
        # the overrun steps are expected to run longer now (their next overrun is measured from that)
        for step in overrun:
            self.planned[step] = lengths[step]

    def _finish_together(
        self,
        state: _State,
        running: dict[asyncio.Task[StepOutcome], str],
        done: set[asyncio.Task[StepOutcome]],
    ) -> None:
        """Finish the steps reported done at once, by end.

        Those whose trace ends are the same instant for the judge
        (:func:`~peakopt.oracle.base.instants.same_instant`) release their successors together, in
        workflow order, as the simulator does.
        """
        first, mark = None, len(state.ready)
        for task in sorted(done, key=lambda t: (t.result().ended, self.index[running[t]])):
            end = round(task.result().ended - state.t0, PLACES)
            if first is None or not same_instant(end, first):
                first, mark = end, len(state.ready)  # a later instant: its releases queue after these
            self._finish(state, running.pop(task), task.result())
            state.ready[mark:] = sorted(state.ready[mark:], key=self.index.__getitem__)

    def _finish(self, state: _State, step: str, outcome: StepOutcome) -> None:
        j = self.index[step]
        end = outcome.ended - state.t0
        for k, amount, _ in self.needs[j]:
            state.free[k] += amount
        del state.running[step]
        if not state.running:
            state.free = list(self.capacity)  # nothing holds capacity: drop floating-point residue
        state.records[step] = StepRecord(
            id=step,
            status="ok" if outcome.ok else "failed",
            start=round(state.starts[step], PLACES),
            end=round(max(end, state.starts[step]), PLACES),
            exit_code=outcome.exit_code,
            pid=outcome.pid,
            usage=outcome.usage,
            error=outcome.error,
        )
        if outcome.usage is not None:  # the average cores are known only now
            self.overuse.check(step, measured_demand(outcome.usage), f"at {end:.3f} s, at its end")
        verdict = "done" if outcome.ok else f"FAILED ({outcome.error or outcome.exit_code})"
        self.progress(f"{end:8.3f}s {verdict} {step}")
        if outcome.ok:
            if callable(self.steps[step]):
                self.results[step] = outcome.result
            released = []
            for succ in state.successors[step]:
                state.left[succ] -= 1
                if not state.left[succ] and succ not in state.skipped:
                    released.append(succ)
            state.ready.extend(sorted(released, key=self.index.__getitem__))
        elif self.on_failure == "stop":
            state.stopping = True
        else:
            skipped = state.skip_after(step)
            tell = getattr(self.policy, "skip", None)  # a stateful order must not wait for them
            if skipped and callable(tell):
                tell(skipped)
            state.failed.append(step)

    def _stalled(self, state: _State) -> str:
        listed = ", ".join(repr(s) for s in state.ready[:5]) + (" ..." if len(state.ready) > 5 else "")
        return f"policy {self.name!r} stalled: nothing runs, steps {listed} are ready and it started none"

    def _fault(self, state: _State, message: str) -> None:
        """The policy failed: start nothing more (the running steps finish); the trace records why."""
        state.fault, state.stopping = message, True
        self.progress(f"{time.monotonic() - state.t0:8.3f}s {message}; no more steps start")

    def _trace(self, state: _State, wall: str) -> Trace:
        records = [
            state.records.get(t.id) or StepRecord(id=t.id, status="skipped") for t in self.workflow.tasks
        ]
        return Trace(
            workflow=self.workflow,
            machine=self.machine,
            policy=self.name,
            guarded=self.guard,
            on_failure=self.on_failure,
            started_at=wall,
            status="ok" if all(r.status == "ok" for r in records) and state.fault is None else "failed",
            steps=tuple(records),
            error=state.fault,
            replans=None if self.replan is None else tuple(self.replans),
        )


class _State:
    """What a run knows: ready steps, start times, free capacity, what failed."""

    def __init__(self, workflow: Workflow, t0: float, resources: int) -> None:
        self.t0 = t0
        self.left = {t.id: len(t.depends_on) for t in workflow.tasks}
        self.successors: dict[str, list[str]] = {t.id: [] for t in workflow.tasks}
        for task in workflow.tasks:
            for pred in task.depends_on:
                self.successors[pred].append(task.id)
        self.ready = [t.id for t in workflow.tasks if not t.depends_on]
        self.starts: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.records: dict[str, StepRecord] = {}
        self.skipped: set[str] = set()
        self.free = [0.0] * resources
        self.stopping = False
        self.failed: list[str] = []  # failed since the last re-plan
        self.fault: str | None = None  # why the policy could not go on

    def skip_after(self, failed: str) -> list[str]:
        """Skip every step that depends on ``failed``, directly or not; the steps newly skipped."""
        stack, found = list(self.successors[failed]), []
        while stack:
            step = stack.pop()
            if step not in self.skipped:
                self.skipped.add(step)
                found.append(step)
                stack.extend(self.successors[step])
        return found


def run_workflow(
    workflow: Workflow,
    machine: Machine,
    policy: OnlinePolicy,
    steps: Mapping[str, Step] | None = None,
    **options: object,
) -> Trace:
    """Run the workflow under a :class:`Controller` (``options`` as its keywords) in a new event loop."""
    controller = Controller(workflow, machine, policy, steps, **options)  # type: ignore[arg-type]
    return asyncio.run(controller.run())
