"""A workflow declared to a governor up front: its steps, the order over them, and re-planning.

With ``Governor(machine, workflow=wf, policy=...)`` (or :meth:`Governor.declare`), the first call
named for a step of ``wf`` *is* that step: its demand and expected duration default to the
step's, and it is not ready until every step it depends on in ``wf`` has ended (or was
withdrawn, or :meth:`Governor.skip`-ped), whether or not that step has asked yet. Any other call
is *undeclared* and admitted as without a workflow.

The policy is a name of :func:`peakopt.runtime.policies.named_policy` (``robust``, ``optimal``,
a heuristic's online form) or an :class:`~peakopt.oracle.uncertain.online.OnlinePolicy` for ``wf``: it
is asked, as the controller asks it, about the declared calls only (ready, running), with the
machine's free capacity; the undeclared ready calls are tried after its picks, in ready order
(``admission``). The live names (``admission``, ``admission:strict``, ``cap:K``, ``serial``)
stay live policies over every call: the workflow then gives dependencies and demands only.

**Keeping the order right.** A plan's order is stateful: it moves past the steps it picked.
When the governor started a declared call the order did not pick (the fairness rule, or the
progress rule), held back one it picked, or a declared call was withdrawn, the order is rebuilt
from what has started (:meth:`Declared.pick`): ``fresh()`` and ``skip()`` of an
:class:`~peakopt.oracle.uncertain.policies.Positional`, or a new
:class:`~peakopt.runtime.replan.RestOfPlan`; a plug-in policy of another kind is told through
its ``skip`` method, if any.

**Fairness under a plan's order.** The order ranks the declared calls among themselves: a
declared call is passed over by the declared calls the plan puts before it (fewer than the
workflow's steps: never forever), which do not count towards the governor's ``bypass``, and by
at most ``bypass`` undeclared ones; an undeclared call counts every call that passes over it.
Once a call is owed it goes first whatever the plan says (and the order is rebuilt around it).

**Re-planning** (``replan=Replan(...)``): whenever the governor decides (a call asks or one
ends — the only instants a new order changes anything), a declared call running longer than
:meth:`Replan.due` of its planned duration makes it re-plan the declared steps not started
around what has run (:func:`peakopt.runtime.replan.replan`, the controller's), then go on in
the new plan's order. The solve runs outside the governor's lock, in the thread of the call
that noticed the overrun (within :attr:`Replan.time_limit`); the other calls meanwhile go on in
the order they had. Each re-plan is recorded in the trace (``replans``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from peakopt.models import Machine, PeakoptError, SolveResult, Workflow
from peakopt.oracle.uncertain.online import OnlinePolicy
from peakopt.oracle.uncertain.policies import Positional
from peakopt.runtime.calls import Call
from peakopt.runtime.leases import CountCap, GovernorError, ReadyOrder, named_live_policy
from peakopt.runtime.replan import OVERRUN_GUESS, Moment, Replan, RestOfPlan, record, replan, warm
from peakopt.runtime.trace import ReplanRecord

log = logging.getLogger(__name__)

#: Rebuilds the order from the declared steps that started (or are gone).
Builder = Callable[[set[str]], OnlinePolicy]


@dataclass
class ReplanJob:
    """A re-plan to solve: the moment, the overrun steps (ran, planned), the workflow as it stands."""

    moment: Moment
    overrun: dict[str, tuple[float, float]]
    standing: Workflow
    began: float = 0.0


def _builder(order: OnlinePolicy) -> Builder | None:
    """How to rebuild ``order`` from the steps done (None: it cannot be rebuilt)."""
    if not isinstance(order, Positional):
        return None

    def rebuilt(done: set[str]) -> OnlinePolicy:
        fresh = order.fresh()
        fresh.skip(done)
        return fresh

    return rebuilt


class Declared:
    """A declared workflow as a governor follows it (under the governor's lock but for :meth:`solve`).

    Parameters
    ----------
    workflow, machine
        The steps and the capacities.
    order
        The policy over the declared calls, or None (a live policy decides for every call).
    name
        The policy's name, for messages.
    options
        When to re-plan (None: never).
    """

    def __init__(
        self,
        workflow: Workflow,
        machine: Machine,
        order: OnlinePolicy | None,
        name: str,
        options: Replan | None,
    ) -> None:
        self.workflow, self.machine, self.name, self.options = workflow, machine, name, options
        self.steps = {t.id: t for t in workflow.tasks}
        self.order, self._build = order, (_builder(order) if order is not None else None)
        self.planned = {t.id: t.length for t in workflow.tasks}
        self.replans: list[ReplanRecord] = []
        self.calls: set[str] = set()  # the ids of the calls that are declared steps
        self.done: set[str] = set()  # declared steps started, withdrawn or skipped
        self.gone: set[str] = set()  # declared steps withdrawn or skipped (never run)
        self._told: set[str] = set()  # what the order believes is done
        self.job: ReplanJob | None = None
        self.late: dict[str, tuple[float, float]] = {}  # ended past their due, not re-planned for yet
        self.solving = False
        if options is not None:
            warm()

    # -- matching ----------------------------------------------------------------------------

    def match(self, name: str, lease_id: str) -> bool:
        """Whether the call ``lease_id`` (named ``name``) is the declared step ``name``."""
        if name in self.steps and lease_id == name and name not in self.done:
            self.calls.add(lease_id)
            return True
        return False

    def demand(self, step: str) -> dict[str, float]:
        """The step's declared peak demand per resource."""
        task = self.steps[step]
        return {r: task.peak(r) for r in sorted(task.resources)}

    # -- the order ---------------------------------------------------------------------------

    def begun(self, step: str) -> None:
        """A declared call was admitted."""
        self.done.add(step)

    def drop(self, step: str) -> None:
        """A declared step will never run (withdrawn, or skipped by the caller)."""
        self.done.add(step)
        self.gone.add(step)

    def pick(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> list[str]:
        """The ready declared calls the order starts now (ready order when it raises)."""
        assert self.order is not None
        if self._told != self.done:
            self._resync()
        try:
            picked = list(dict.fromkeys(self.order(now, ready, running, free)))
        except Exception:
            log.exception("policy %s raised; trying the declared calls in ready order", self.name)
            picked = list(ready)
        self._told |= set(picked)
        return picked

    def _resync(self) -> None:
        """Make the order agree with what started (see the module docstring)."""
        assert self.order is not None
        if self._build is not None:
            self.order = self._build(set(self.done))
        else:
            tell = getattr(self.order, "skip", None)
            if callable(tell):
                tell(sorted(self.done - self._told))
        self._told = set(self.done)

    # -- re-planning -------------------------------------------------------------------------

    def ended(self, step: str, ran: float) -> None:
        """A declared call ended after ``ran`` seconds: past its due, the rest is re-planned too."""
        if self.options is not None and ran >= self.options.due(self.planned[step]):
            self.late[step] = (ran, self.planned[step])

    def overrun(self, now: float, running: Iterable[Call], t0: float, calls: Iterable[Call]) -> bool:
        """Whether a declared call overran (then :attr:`job` holds the re-plan to solve)."""
        if self.options is None or self.solving or self.job is not None:
            return False
        due = self.options.due
        starts = {c.id: (c.lease.admitted_at or t0) - t0 for c in running if c.id in self.calls}
        over = {
            s: (now - at, self.planned[s]) for s, at in starts.items() if now - at >= due(self.planned[s])
        }
        over.update(self.late)
        self.late = {}
        if not over or not (self.steps.keys() - self.done):
            return False  # no overrun, or nothing left to order
        self.job = self._job(now, over, starts, t0, calls)
        return True

    def _job(
        self,
        now: float,
        over: dict[str, tuple[float, float]],
        running: dict[str, float],
        t0: float,
        calls: Iterable[Call],
    ) -> ReplanJob:
        began: dict[str, float] = {}
        ends: dict[str, float] = {}
        for call in calls:
            lease = call.lease
            if call.id in self.calls and lease.admitted_at is not None:
                began[call.id] = lease.admitted_at - t0
                if call.ended_at is not None and call.id not in running:
                    ends[call.id] = call.ended_at - t0
        lengths = {s: max(self.planned[s], now - at) for s, at in running.items()}
        lengths.update({s: ran * OVERRUN_GUESS for s, (ran, _) in over.items() if s in running})
        # a withdrawn step's dependents ran without it: the rest keeps no edge to it
        tasks = tuple(
            t.model_copy(update={"depends_on": tuple(d for d in t.depends_on if d not in self.gone)})
            for t in self.workflow.tasks
        )
        standing = self.workflow.model_copy(update={"tasks": tasks})
        moment = Moment(now, began, ends, lengths, frozenset(self.gone))
        return ReplanJob(moment, over, standing)

    def recorded(self, workflow: Workflow) -> tuple[ReplanRecord, ...]:
        """The re-plans so far, naming only the steps of ``workflow`` (a trace's: the calls that ended)."""
        known = workflow.index
        kept = []
        for entry in self.replans:
            update: dict[str, object] = {"steps": tuple(s for s in entry.steps if s in known)}
            for field in ("plan", "assumed"):
                value = getattr(entry, field)
                if value is not None:
                    update[field] = {s: v for s, v in value.items() if s in known}
            kept.append(entry.model_copy(update=update))
        return tuple(kept)

    def take(self) -> ReplanJob | None:
        """The re-plan to solve now, if any (the caller solves it: :meth:`solve`, then :meth:`install`)."""
        job, self.job = self.job, None
        if job is not None:
            self.solving = True
            job.began = time.perf_counter()
        return job

    def solve(self, job: ReplanJob) -> tuple[Workflow, SolveResult] | PeakoptError:
        """The new plan (outside the governor's lock), or why there is none."""
        assert self.options is not None
        try:
            return replan(job.standing, self.machine, job.moment, self.options)
        except PeakoptError as exc:
            return exc

    def install(self, job: ReplanJob, outcome: tuple[Workflow, SolveResult] | PeakoptError | None) -> None:
        """Record the re-plan and go on in its order (``outcome`` None: the solve crashed)."""
        self.solving = False
        for step, (ran, _) in job.overrun.items():  # its next overrun is measured from the guess
            self.planned[step] = ran * OVERRUN_GUESS
        if outcome is None:
            outcome = PeakoptError("the re-plan's solve raised (see the log)")
        entry = record(job.moment.now, job.overrun, job.began, outcome)
        self.replans.append(entry)
        if entry.plan is None or isinstance(outcome, PeakoptError):
            return
        rest, result = outcome
        standing, machine = job.standing, self.machine

        def rebuilt(done: set[str]) -> OnlinePolicy:
            return RestOfPlan(standing, machine, rest, result, done)

        self._build = rebuilt
        self.order = rebuilt(set(self.done))
        self._told = set(self.done)


def resolved(
    policy: str | OnlinePolicy, workflow: Workflow | None, machine: Machine, options: Replan | None
) -> tuple[OnlinePolicy, Declared | None]:
    """The governor's live policy and its declared workflow (None without one) for ``policy``.

    With a workflow, a live name or policy stays live (the workflow gives dependencies and
    demands); any other name is :func:`~peakopt.runtime.policies.named_policy`'s, and it or a
    policy object orders the declared calls (the undeclared ones then go in ready order).

    Raises
    ------
    GovernorError
        ``replan`` or a planned name without a workflow; a name neither live nor a planned or
        method name; a planned policy whose reference has no schedule.
    """
    if workflow is None:
        if options is not None:
            raise GovernorError("replan needs a declared workflow (workflow=...)")
        if not isinstance(policy, str):
            return policy, None
        try:
            return named_live_policy(policy), None
        except GovernorError as exc:
            raise GovernorError(f"{exc}; a planned policy needs a declared workflow (workflow=...)") from None
    name = policy if isinstance(policy, str) else type(policy).__name__
    if isinstance(policy, ReadyOrder | CountCap):
        return policy, Declared(workflow, machine, None, name, options)
    if not isinstance(policy, str):
        return ReadyOrder(), Declared(workflow, machine, policy, name, options)
    try:
        return named_live_policy(policy), Declared(workflow, machine, None, name, options)
    except GovernorError:
        pass
    from peakopt.runtime.policies import named_policy  # here: it loads the solver

    try:
        order = named_policy(policy, workflow, machine)
    except PeakoptError as exc:
        raise GovernorError(f"policy {policy!r} for workflow {workflow.id!r}: {exc}") from exc
    return ReadyOrder(), Declared(workflow, machine, order, name, options)
