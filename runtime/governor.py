"""The governor: per-call admission of live tool calls that are not known in advance (dynamic workflows).

An agent's tool calls appear turn by turn. Each call asks the governor for a :class:`Lease`
with its demand (declared, or looked up by tool name in a
:class:`~peakopt.runtime.profiles.ProfileStore`), the earlier calls it depends on and its
expected duration, runs once admitted, and releases the lease when it ends, however it ends::

    governor = Governor(Machine(name="box", capacity={"memory_mb": 4096}))

    async with governor.admit("embed", demand={"memory_mb": 3000}):
        ...  # runs only while the calls admitted with it fit

**The guard.** Whenever a call asks or one ends, the policy (an
:class:`~peakopt.oracle.uncertain.online.OnlinePolicy`, ``admission`` by default: see
:mod:`peakopt.runtime.leases`) picks ready calls and the governor admits those whose clamped
peak demand fits the free capacity (:func:`peakopt.oracle.uncertain.dispatch.admitted`, the controller's
guard): the admitted set never exceeds a capacity, and a call over a capacity on its own is
clamped to it and so runs alone on that resource. When nothing runs, the oldest ready call is
admitted whatever the policy says, so no policy can stall the governor.

**The fairness rule (FIFO with bounded bypass).** Calls are *ready* in the order they asked
(or their last dependency ended). A later-ready call may be admitted while an earlier one waits
— it *passes over* it — only while that earlier call has been passed over fewer than ``bypass``
times (16 by default) and, with ``patience`` set, has waited less than ``patience`` seconds.
From then on the call is *owed*: no later call is admitted before it, the owed calls are
admitted first, in order, as soon as they fit, so the capacity the running calls free is
reserved for them. Hence no call is ever passed over more than ``bypass`` times, and one waits
at most until the calls running when it became owed have ended (no starvation, no deadlock:
with nothing running, any single call fits).

**A declared workflow** (``workflow=`` or :meth:`Governor.declare`): the calls named for its
steps wait for their dependencies in it and follow a planned order (``robust``, ``optimal``...),
re-planned on an overrun with ``replan=``; see :mod:`peakopt.runtime.declared`, which also says
how the fairness rule combines with a plan's order.

**Cancellation and threads.** One lock guards the state; async waiters are woken through their
loop (``call_soon_threadsafe``), sync ones (:meth:`Governor.acquire_blocking`, for tools in
threads) through a :class:`threading.Event`. A call cancelled (or timed out) while it waits is
withdrawn at once; one cancelled while it runs is released by :meth:`admit` and :meth:`govern`
with outcome ``cancelled``: its share is free before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from peakopt.models import Machine, Workflow
from peakopt.oracle.uncertain.dispatch import admitted, clamped_needs
from peakopt.oracle.uncertain.online import OnlinePolicy
from peakopt.runtime.calls import (
    Admissions,
    Call,
    OverDeclared,
    calls_trace,
    checked_amounts,
    wake,
    warn_over,
)
from peakopt.runtime.declared import Declared, resolved
from peakopt.runtime.events import EventHub
from peakopt.runtime.governed import Governed
from peakopt.runtime.leases import (
    OUTCOMES,
    CallOutcome,
    CountCap,
    GovernorError,
    GovernorEvent,
    GovernorStatus,
    Lease,
    ReadyOrder,
)
from peakopt.runtime.profiles import ProfileStore
from peakopt.runtime.replan import Replan
from peakopt.runtime.trace import Trace

log = logging.getLogger(__name__)

__all__ = ["BYPASS", "Governor", "OverDeclared"]

#: How many later calls may pass over a waiting one before capacity is reserved for it.
BYPASS = 16


class Governor(Governed):
    """Admits live calls under ``machine``'s capacities (see the module docstring).

    Parameters
    ----------
    machine
        The capacities every resource of it is guarded at.
    policy
        Which ready calls to try first: a name (``admission``, ``admission:strict``, ``cap:K``,
        ``serial``) or an :class:`~peakopt.oracle.uncertain.online.OnlinePolicy`.
    profiles
        Where a call without a declared demand is looked up, by tool name (else its name).
    clock
        Seconds, monotonic: the times of leases, events and the trace.
    bypass, patience
        The fairness bound (see the module docstring): how many later calls may pass over a
        waiting one, and for how many seconds (None: no time bound).
    name
        The trace's workflow id.
    workflow
        A workflow declared up front (see :mod:`peakopt.runtime.declared`): the calls named for
        its steps wait for their dependencies in it and follow ``policy``'s order (``robust``,
        ``optimal``, a heuristic's online form, as ``peakopt run``'s), the others are admitted
        as without one.
    replan
        Re-plan the declared steps when one overruns (needs ``workflow``).
    """

    def __init__(
        self,
        machine: Machine,
        *,
        policy: str | OnlinePolicy = "admission",
        workflow: Workflow | None = None,
        replan: Replan | None = None,
        profiles: ProfileStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        bypass: int = BYPASS,
        patience: float | None = None,
        name: str = "governor",
    ) -> None:
        if bypass < 0:
            raise GovernorError(f"bypass must be >= 0, got {bypass}")
        self.machine, self.profiles, self.clock, self.name = machine, profiles, clock, name
        self.bypass, self.patience = bypass, patience
        self._plan: Declared | None = None
        self._awaited: dict[str, list[Call]] = {}  # declared step not asked yet -> calls waiting for it
        self._set_policy(policy, workflow, replan)
        self.resources = tuple(sorted(machine.capacity))
        self.capacity = tuple(machine.capacity[r] for r in self.resources)
        self._where = {r: k for k, r in enumerate(self.resources)}
        self._lock = threading.Lock()
        self._calls: dict[str, Call] = {}
        self._ready: list[Call] = []
        self._running: dict[str, Call] = {}
        self._free = list(self.capacity)
        self._names: dict[str, int] = {}
        self._seq = 0
        # the free capacity and the last ready position of an event that admitted nothing
        self._quiet: tuple[tuple[float, ...], int] | None = None
        self._admissions = Admissions()  # by ready order: how many later calls overtook a waiting one
        self._others = Admissions()  # the same, counting the undeclared calls only (under a plan)
        self._counts = [0, 0]  # admitted, released
        self._t0: float | None = None
        self._wall = ""
        self._hub = EventHub()

    def _set_policy(
        self, policy: str | OnlinePolicy, workflow: Workflow | None, options: Replan | None
    ) -> None:
        self.policy, self._plan = resolved(policy, workflow, self.machine, options)
        self._given = policy
        self.policy_name = policy if isinstance(policy, str) else type(policy).__name__
        self._strict = bool(getattr(self.policy, "strict", False))

    def declare(
        self,
        workflow: Workflow,
        *,
        policy: str | OnlinePolicy | None = None,
        replan: Replan | None = None,
    ) -> None:
        """Declare ``workflow`` before the first call (as ``Governor(..., workflow=...)``).

        Parameters
        ----------
        workflow
            The steps the calls named for them are (see :mod:`peakopt.runtime.declared`).
        policy
            The policy (default: the governor's, by its name when it was given one).
        replan
            When to re-plan (None: never).

        Raises
        ------
        GovernorError
            After the first call, or for a policy that cannot order the workflow.
        """
        with self._lock:
            if self._calls:
                raise GovernorError("declare the workflow before the first call")
            self._set_policy(policy if policy is not None else self._given, workflow, replan)

    def skip(self, steps: Iterable[str]) -> None:
        """Declared steps that will not be called: the calls waiting for them no longer wait.

        Raises
        ------
        GovernorError
            For a step not declared, or one already called.
        """
        with self._lock:
            plan = self._plan
            now = self.clock()
            for step in steps:
                if plan is None or step not in plan.steps:
                    raise GovernorError(f"step {step!r} is not a step of a declared workflow")
                if step in self._calls:
                    raise GovernorError(f"step {step!r} has been called: it cannot be skipped")
                plan.drop(step)
                for later in self._awaited.pop(step, []):
                    self._unblocked(later, step, now)
            woken = self._dispatch(now)
        self._after(woken)

    # -- asking, waiting, releasing --------------------------------------------------------

    async def acquire(
        self,
        name: str,
        *,
        demand: Mapping[str, float] | None = None,
        tool: str | None = None,
        depends_on: Iterable[str | Lease] = (),
        expected: float | None = None,
    ) -> Lease:
        """Wait until the call is admitted; its lease (release it with :meth:`release`).

        Cancelling the awaiting task while it waits withdraws the request.

        Raises
        ------
        GovernorError
            No demand declared and none in the profile store, a bad demand, an unknown dependency.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        call = self._ask(name, demand, tool, depends_on, expected, (loop, future))
        if call.state == "running":
            return call.lease
        try:
            await future
        except BaseException:
            self._give_up(call, "cancelled while waiting", keep=False)
            raise
        return call.lease

    def acquire_blocking(
        self,
        name: str,
        *,
        demand: Mapping[str, float] | None = None,
        tool: str | None = None,
        depends_on: Iterable[str | Lease] = (),
        expected: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Block this thread until the call is admitted (for sync tools in threads); its lease.

        Raises
        ------
        TimeoutError
            When it is not admitted within ``timeout`` seconds (the request is withdrawn).
        GovernorError
            As :meth:`acquire`.
        """
        event = threading.Event()
        call = self._ask(name, demand, tool, depends_on, expected, event)
        if call.state == "running":
            return call.lease
        try:
            woken = event.wait(timeout)
        except BaseException:
            self._give_up(call, "interrupted while waiting", keep=False)
            raise
        if not woken and not self._give_up(call, f"not admitted within {timeout:g} s", keep=True):
            raise TimeoutError(f"call {call.id!r} was not admitted within {timeout:g} s")
        if call.state == "withdrawn":
            raise GovernorError(f"call {call.id!r} was withdrawn while it waited ({call.error})")
        return call.lease

    def release(
        self,
        lease: Lease,
        *,
        outcome: CallOutcome = "ok",
        error: str | None = None,
        usage: Mapping[str, float] | None = None,
    ) -> None:
        """End a call: its share is free at once and the calls it makes fit are admitted.

        Releasing twice does nothing; releasing a waiting call withdraws it.

        Parameters
        ----------
        lease
            The call.
        outcome, error
            How it ended, and why it failed.
        usage
            What it was measured to use at its peak, per resource (``memory_mb``, ``cpu``...):
            recorded in the trace (``peakopt score --demand measured``) and the spans, learnt by
            the profile store, and warned about (:class:`OverDeclared`) where it exceeds the demand
            the call was admitted with.

        Raises
        ------
        GovernorError
            For a lease of another governor, an unknown outcome or a bad usage.
        """
        if outcome not in OUTCOMES:
            raise GovernorError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        used = checked_amounts(lease.id, "usage", usage) if usage is not None else None
        with self._lock:
            call = self._calls.get(lease.id)
            if call is None or call.lease.requested_at != lease.requested_at:
                raise GovernorError(f"lease {lease.id!r} is not one of this governor's")
            if call.state in ("ended", "withdrawn"):
                return
            now = self.clock()
            if call.state == "running":
                call.usage = used
                self._end(call, now, outcome, error)
                woken = self._dispatch(now)
            else:  # its waiter learns it was withdrawn
                self._withdraw(call, now, error or f"released while waiting ({outcome})")
                woken = [call, *self._dispatch(now)]
        self._after(woken)
        if used is not None:
            warn_over(call.lease, used)

    # -- what the governor knows -----------------------------------------------------------

    @property
    def plan(self) -> Declared | None:
        """The declared workflow as the governor follows it (its order, its re-plans); None without one."""
        return self._plan

    @property
    def started(self) -> float | None:
        """When the first call asked, on the governor's clock (the trace's time 0); None before."""
        return self._t0

    def status(self) -> GovernorStatus:
        """Capacities, what the running calls hold, the running and the waiting calls."""
        with self._lock:
            in_use = dict.fromkeys(self.resources, 0.0)
            for call in self._running.values():
                for k, amount, _ in call.needs:
                    in_use[self.resources[k]] += amount
            waiting = tuple(c.lease for c in self._calls.values() if c.state in ("blocked", "ready"))
            return GovernorStatus(
                capacity=dict(self.machine.capacity),
                in_use=in_use,
                running=tuple(c.lease for c in self._running.values()),
                waiting=waiting,
                admitted=self._counts[0],
                released=self._counts[1],
                policy=self.policy_name,
            )

    def subscribe(self, listener: Callable[[GovernorEvent], None]) -> Callable[[], None]:
        """Call ``listener`` with every event from now on, in order; returns the unsubscribe.

        Listeners run outside the governor's lock (they may call it), one event at a time; an
        exception in one is logged, never raised into the call that caused the event.
        """
        return self._hub.subscribe(listener)

    def trace(self) -> Trace:
        """The trace of every call that has ended so far (see :mod:`peakopt.runtime.calls`).

        Raises
        ------
        GovernorError
            When no call has ended yet.
        """
        with self._lock:
            calls = list(self._calls.values())
            t0 = self._t0 if self._t0 is not None else self.clock()
            trace = calls_trace(
                calls,
                self.machine,
                workflow_id=self.name,
                policy=self.policy_name,
                t0=t0,
                started_at=self._wall,
            )
            if self._plan is None or self._plan.options is None:
                return trace
            return trace.model_copy(update={"replans": self._plan.recorded(trace.workflow)})

    # -- inside the lock -------------------------------------------------------------------

    def _ask(
        self,
        name: str,
        demand: Mapping[str, float] | None,
        tool: str | None,
        depends_on: Iterable[str | Lease],
        expected: float | None,
        waiter: Any,
    ) -> Call:
        """Register a request (admitting it if it fits); the call."""
        wanted, guess = self._demand(name, demand, tool, expected)
        deps = tuple(d.id if isinstance(d, Lease) else d for d in depends_on)
        plan = self._plan
        with self._lock:
            unknown = [d for d in deps if d not in self._calls]
            if unknown:
                raise GovernorError(
                    f"call {name!r} depends on {unknown[0]!r}, which has not been requested "
                    "(a call depends on earlier calls only, by lease id)"
                )
            lid = self._new_id(name)
            steps = plan.steps[lid].depends_on if plan is not None and plan.match(name, lid) else ()
            now = self.clock()
            if self._t0 is None:
                self._t0 = now
                self._wall = datetime.datetime.now(datetime.UTC).isoformat()
            deps = tuple(dict.fromkeys((*deps, *steps)))
            lease = Lease(lid, name, tool, wanted, now, None, deps, guess)
            needs = clamped_needs(wanted, self._where, self.capacity)
            call = Call(lease, needs, set(), waiter=waiter)
            self._calls[lid] = call
            call.dependents.extend(self._awaited.pop(lid, []))  # those declared to wait for it
            for dep in deps:
                if dep in self._calls and self._calls[dep].state not in ("ended", "withdrawn"):
                    self._calls[dep].dependents.append(call)
                elif dep not in self._calls and plan is not None and dep not in plan.gone:
                    self._awaited.setdefault(dep, []).append(call)  # a declared step not asked yet
                else:
                    continue
                call.pending.add(dep)
            pending = call.pending
            self._emit("requested", call, now)
            if not pending:
                self._make_ready(call, now)
            woken = self._dispatch(now)
        self._after([c for c in woken if c is not call])
        return call

    def _demand(
        self, name: str, demand: Mapping[str, float] | None, tool: str | None, expected: float | None
    ) -> tuple[dict[str, float], float | None]:
        """The call's demand and expected seconds: as declared, else the profile store's."""
        if not isinstance(name, str) or not name:
            raise GovernorError(f"a call's name is a non-empty string, got {name!r}")
        key = tool if tool is not None else name
        step = self._plan.steps.get(name) if self._plan is not None else None
        if step is not None:  # a call named for a declared step: the step's demand and duration
            demand = demand if demand is not None else self._plan.demand(name)  # type: ignore[union-attr]
            expected = expected if expected is not None else step.length
        if demand is None:
            found = self.profiles.demand(key) if self.profiles is not None else None
            if found is None:
                where = "the profile store" if self.profiles is not None else "no profile store (none given)"
                raise GovernorError(
                    f"call {name!r}: no demand declared and tool {key!r} is not in {where}; give "
                    "demand={...} (demand={} for none) or profile it (peakopt profile --store FILE)"
                )
            demand = found
        if expected is None and self.profiles is not None:
            expected = self.profiles.expected(key)
        wanted = checked_amounts(name, "demand", demand)
        if expected is not None and not 0 <= expected < float("inf"):
            raise GovernorError(f"call {name!r}: expected {expected!r} is not a finite number >= 0")
        return wanted, expected

    def _new_id(self, name: str) -> str:
        count = self._names.get(name, 0) + 1
        found = name if count == 1 else f"{name}#{count}"
        while found in self._calls:
            count += 1
            found = f"{name}#{count}"
        self._names[name] = count
        return found

    def _make_ready(self, call: Call, now: float) -> None:
        self._seq += 1
        self._admissions.grow(self._seq)
        self._others.grow(self._seq)
        call.state, call.seq, call.ready_at = "ready", self._seq, now
        self._ready.append(call)

    def _owed(self, call: Call, now: float) -> bool:
        """Whether no later call may pass over ``call`` any more (the fairness rule)."""
        # under a plan's order, a declared call is passed over by the declared calls the plan puts
        # before it (fewer than the workflow's steps) and by at most ``bypass`` others
        counts = self._others if self._ordered and call.id in self._plan.calls else self._admissions  # type: ignore[union-attr]
        return counts.after(call.seq) >= self.bypass or (
            self.patience is not None and now - call.ready_at >= self.patience
        )

    def _candidates(self, now: float) -> tuple[list[Call], bool]:
        """The ready calls to try, in order, and whether the first that does not fit blocks the rest."""
        ready = self._ready
        # the owed calls are the oldest ready ones (the older, the more passed over and the longer waiting)
        owed = list(itertools.takewhile(lambda c: self._owed(c, now), ready))
        strict = self._strict or bool(owed)
        policy = self.policy
        if self._ordered:
            chosen = owed or self._planned(now)  # an owed call goes first, whatever the plan says
        elif isinstance(policy, ReadyOrder):  # the named policies, without building their arguments
            chosen = owed or ready
        elif isinstance(policy, CountCap):
            chosen = (owed or ready)[: max(0, policy.limit - len(self._running))]
        else:
            chosen = self._picked(now, owed)
        if not chosen and not self._running:
            chosen, strict = ready[:1], True  # nothing runs: the oldest fits, whatever the policy says
        return chosen, strict

    def _picked(self, now: float, owed: list[Call]) -> list[Call]:
        """What a plug-in policy picks, in its order (among the owed calls, in ready order, if any)."""
        t0 = self._t0 or 0.0
        ids = [c.id for c in self._ready]
        free = dict(zip(self.resources, self._free, strict=True))
        running = {c.id: (c.lease.admitted_at or t0) - t0 for c in self._running.values()}
        try:
            picked = list(dict.fromkeys(self.policy(now - t0, ids, running, free)))
        except Exception:
            log.exception("policy %s raised; trying the ready calls in ready order", self.policy_name)
            picked = ids
        by_id = {c.id: c for c in self._ready}
        if not set(picked) <= by_id.keys():
            log.error("policy %s picked calls that are not ready; they are passed over", self.policy_name)
        if owed:  # the capacity is reserved for them: only they may go, in ready order
            chosen = set(picked)
            return [c for c in owed if c.id in chosen]
        return [by_id[i] for i in picked if i in by_id]

    @property
    def _ordered(self) -> bool:
        """Whether a declared workflow's order decides for its calls."""
        return self._plan is not None and self._plan.order is not None

    def _planned(self, now: float) -> list[Call]:
        """The declared calls the order picks, then the undeclared ready ones in ready order."""
        plan = self._plan
        assert plan is not None
        t0 = self._t0 or 0.0
        mine = [c.id for c in self._ready if c.id in plan.calls]
        free = dict(zip(self.resources, self._free, strict=True))
        running = {
            c.id: (c.lease.admitted_at or t0) - t0 for c in self._running.values() if c.id in plan.calls
        }
        by_id = {c.id: c for c in self._ready}
        picked = [by_id[i] for i in plan.pick(now - t0, mine, running, free) if i in mine]
        return picked + [c for c in self._ready if c.id not in plan.calls]

    def _dispatch(self, now: float) -> list[Call]:
        """Admit what the policy picks, the guard lets through and the fairness rule allows."""
        plan = self._plan
        if plan is not None and plan.overrun(
            now - (self._t0 or 0.0), self._running.values(), self._t0 or 0.0, self._calls.values()
        ):
            return []  # the caller re-plans first, then admits (see _after)
        if not self._ready:
            return []
        order, strict = self._candidates(now)
        quiet, self._quiet = self._quiet, None
        if (
            quiet is not None
            and quiet[0] == tuple(self._free)
            and not self._ordered
            and isinstance(self.policy, ReadyOrder)
        ):
            # nothing fitted this free capacity at the last event and no call has left the queue
            # since: only the calls ready since can fit now (so a burst costs each call one check)
            order = [] if strict else [c for c in order if c.seq > quiet[1]]
        fit = {
            order[p] for p in admitted(range(len(order)), [c.needs for c in order], self._free, strict=strict)
        }
        if not fit:
            self._quiet = (tuple(self._free), self._seq)
            return []
        woken: list[Call] = []
        older: list[Call] = []  # calls ready before the current one that stay waiting
        for call in self._ready:  # in ready order: who passes over whom
            # the oldest waiting call is the most passed over: once it is owed, nothing later goes
            if call in fit and not (older and self._owed(older[0], now)):
                self._admissions.add(call.seq)
                if plan is None or call.id not in plan.calls:
                    self._others.add(call.seq)
                woken.append(call)
            else:
                older.append(call)
        for call in woken:
            self._start(call, now)
        self._ready = older
        return woken

    def _start(self, call: Call, now: float) -> None:
        for k, amount, _ in call.needs:
            self._free[k] -= amount
        call.state = "running"
        old = call.lease
        call.lease = Lease(
            old.id, old.name, old.tool, old.demand, old.requested_at, now, old.depends_on, old.expected
        )
        self._running[call.id] = call
        self._counts[0] += 1
        if self._plan is not None and call.id in self._plan.calls:
            self._plan.begun(call.id)
        self._emit("admitted", call, now)

    def _end(self, call: Call, now: float, outcome: CallOutcome, error: str | None) -> None:
        for k, amount, _ in call.needs:
            self._free[k] += amount
        del self._running[call.id]
        if not self._running:
            self._free = list(self.capacity)  # nothing holds capacity: drop floating-point residue
        call.state, call.ended_at, call.outcome, call.error = "ended", now, outcome, error
        self._counts[1] += 1
        self._emit("released", call, now, outcome, error)
        if self._plan is not None and call.id in self._plan.calls and call.lease.admitted_at is not None:
            self._plan.ended(call.id, now - call.lease.admitted_at)
        self._learn(call, now, outcome)
        self._unblock(call, now)

    def _withdraw(self, call: Call, now: float, why: str) -> None:
        if call in self._ready:
            self._ready.remove(call)
            self._quiet = None  # the call that blocked the others may be gone
        call.state, call.ended_at, call.error = "withdrawn", now, why
        if self._plan is not None and call.id in self._plan.calls:
            self._plan.drop(call.id)
        self._emit("withdrawn", call, now, error=why)
        self._unblock(call, now)

    def _unblock(self, call: Call, now: float) -> None:
        for later in call.dependents:
            self._unblocked(later, call.id, now)
        call.dependents = []

    def _unblocked(self, later: Call, dep: str, now: float) -> None:
        later.pending.discard(dep)
        if not later.pending and later.state == "blocked":
            self._make_ready(later, now)

    def _learn(self, call: Call, now: float, outcome: CallOutcome) -> None:
        lease = call.lease
        if self.profiles is not None and outcome == "ok" and lease.admitted_at is not None:
            self.profiles.observe(
                lease.tool or lease.name, seconds=now - lease.admitted_at, demand=call.usage
            )

    def _emit(
        self, kind: Any, call: Call, now: float, outcome: CallOutcome | None = None, error: str | None = None
    ) -> None:
        if self._hub.listened:
            self._hub.put(GovernorEvent(kind, call.lease, now, outcome, error, call.usage))

    # -- outside the lock ------------------------------------------------------------------

    def _give_up(self, call: Call, why: str, *, keep: bool) -> bool:
        """Withdraw a waiting call; True when it had been admitted meanwhile and ``keep`` (the caller's).

        Without ``keep`` (the waiter was cancelled), a call admitted in that instant is released
        at once: nobody will use its lease.
        """
        with self._lock:
            if call.state != "running" and call.state not in ("ended", "withdrawn"):
                now = self.clock()
                self._withdraw(call, now, why)
                woken = self._dispatch(now)
            else:
                woken = []
        self._after(woken)
        if call.state == "running" and not keep:
            self.release(call.lease, outcome="cancelled", error=why)
            return False
        return call.state == "running"

    def _after(self, woken: list[Call]) -> None:
        """Wake the admitted waiters, then deliver the events."""
        for call in woken:
            wake(call)
        self._hub.deliver()
        if self._plan is not None and self._plan.job is not None:
            self._replan()

    def _replan(self) -> None:
        """Solve the re-plan an overrun set off (outside the lock), go on in its order, admit."""
        plan = self._plan
        assert plan is not None
        with self._lock:
            job = plan.take()
        if job is None:  # another thread took it
            return
        outcome = None
        try:
            outcome = plan.solve(job)
        except Exception:  # the calls go on in the order they had; the trace records the error
            log.exception("the re-plan of %s raised", self.name)
        finally:
            with self._lock:
                plan.install(job, outcome)
                woken = self._dispatch(self.clock())
            self._after(woken)
