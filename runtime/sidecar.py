"""The sidecar's leases: a governor's calls asked over HTTP, kept alive by heartbeats.

:class:`Sidecar` is what ``peakopt serve`` runs behind its endpoints (:mod:`peakopt.runtime.sidecar_api`),
with no HTTP in it, so it is tested on its own with a fake clock. The rules it keeps:

**Admit is a long poll.** A request waits up to its ``wait`` seconds for admission. Not admitted by
then, the answer is ``waiting`` with the lease id, and the request *keeps its place in the queue*:
the client polls again (:meth:`Sidecar.wait`, a long poll too) or releases it to withdraw it. A
request that is neither polled nor heartbeated within the TTL after its last answer is withdrawn
(its client is gone), so the queue never holds a dead client's request.

**Leases expire.** An admitted lease lives for the TTL after its admission, its client's last
heartbeat or its last poll; past that the service releases it with outcome ``expired``: the
capacity of a client that died is free again within the TTL (plus one sweep, a tenth of it). A
poll in progress keeps its request alive whatever its length.

**Ends.** Releasing is idempotent: releasing a released lease again answers as the first time.
A lease that expired, or a request the service withdrew, is *gone* (:class:`RequestError` 410),
so a client learns it lost its lease; an id the service never gave out (or has forgotten: it
keeps the last :data:`KEEP` ended ones) is *unknown* (404).

The governor's listeners run in the thread of the call that caused the event; here every call is
made on the service's event loop, so the events of a request are delivered while it is asked,
released or swept. :meth:`Sidecar.admit` learns its lease id from the ``requested`` event, through
a context variable set for the acquiring task (the governor's ``acquire`` returns only once
admitted).
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from peakopt.models import PeakoptError
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError, GovernorEvent, Lease

#: Where a request is: waiting for admission, admitted, or ended one of three ways.
TicketState = Literal["waiting", "admitted", "released", "expired", "withdrawn"]
#: How a client may say its call ended (``expired`` is the service's).
CLIENT_OUTCOMES = ("ok", "failed", "cancelled")
#: How many ended requests are remembered (to answer a late release or heartbeat).
KEEP = 10_000
#: The longest a single admit or wait call may wait (seconds).
MAX_WAIT = 300.0
#: Loop steps an admit gives the governor to announce its request (one is enough; more is a bug).
STEPS = 100


class RequestError(PeakoptError):
    """A request the service refuses: the HTTP status and one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(eq=False)
class Ticket:
    """One request to the sidecar, from its admit to its end (times on the governor's clock)."""

    name: str
    lease: Lease | None = None
    state: TicketState = "waiting"
    task: asyncio.Task[Lease] | None = None
    #: when it expires (admitted) or is withdrawn (waiting) unless heartbeated or polled
    deadline: float = math.inf
    polls: int = 0
    ended_at: float | None = None
    outcome: str | None = None
    error: str | None = None
    #: the service ended it (expired, withdrawn for want of polls, the service stopping)
    by_service: bool = False

    @property
    def id(self) -> str:
        """The lease id (known once the governor has registered the request)."""
        return self.lease.id if self.lease is not None else ""

    @property
    def live(self) -> bool:
        """Waiting or admitted."""
        return self.state in ("waiting", "admitted")


#: The ticket a task is asking for: its ``requested`` event is delivered in that task's context.
_ASKING: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar(
    "peakopt_sidecar_asking", default=None
)


class Sidecar:
    """A governor's leases asked over HTTP (see the module docstring).

    Parameters
    ----------
    governor
        The governor every request goes to; its clock is the sidecar's.
    ttl
        Seconds a lease lives without a heartbeat (and a waiting request without a poll).
    keep
        How many ended requests are remembered.
    """

    def __init__(self, governor: Governor, *, ttl: float, keep: int = KEEP) -> None:
        if not 0 < ttl < math.inf:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        self.governor, self.ttl, self.keep = governor, ttl, keep
        self.clock = governor.clock
        self.t0 = self.clock()
        self.stopping = False
        self.counts = dict.fromkeys(("requested", "admitted", "released", "expired", "withdrawn"), 0)
        self._live: dict[str, Ticket] = {}
        self._ended: OrderedDict[str, Ticket] = OrderedDict()
        self._unsubscribe = governor.subscribe(self._on_event)

    # -- the endpoints' operations -----------------------------------------------------------

    async def admit(
        self,
        name: str,
        *,
        demand: Mapping[str, float] | None,
        tool: str | None = None,
        depends_on: Iterable[str] = (),
        expected: float | None = None,
        wait: float = 0.0,
    ) -> Ticket:
        """Ask for a lease and wait up to ``wait`` seconds for it; the ticket, admitted or waiting.

        Raises
        ------
        RequestError
            422 for a bad request (the governor's refusal, a resource the machine lacks), 410 when
            it was withdrawn meanwhile, 503 while the service stops.
        """
        self._check_open()
        self._check_resources(name, demand)
        ticket = Ticket(name)
        token = _ASKING.set(ticket)
        try:
            ticket.task = asyncio.create_task(
                self.governor.acquire(
                    name, demand=demand, tool=tool, depends_on=tuple(depends_on), expected=expected
                )
            )
        finally:
            _ASKING.reset(token)
        ticket.task.add_done_callback(_retrieved)
        # the task's first step registers the request (its "requested" event) or refuses it
        for _ in range(STEPS):
            if ticket.lease is not None or ticket.task.done():
                break
            await asyncio.sleep(0)
        if ticket.lease is None:
            _raise_refusal(ticket.task)
        return await self._poll(ticket, wait)

    async def wait(self, lease_id: str, wait: float) -> Ticket:
        """Wait up to ``wait`` more seconds for a waiting request (an admitted one answers at once)."""
        ticket = self.find(lease_id)
        if ticket.state == "withdrawn" and not ticket.by_service:
            raise RequestError(409, f"request {lease_id!r} was withdrawn by its release: ask again")
        return await self._poll(ticket, wait)

    def heartbeat(self, lease_id: str) -> Ticket:
        """Keep a lease (or a waiting request) alive for another TTL."""
        ticket = self.find(lease_id)
        if not ticket.live:
            if ticket.by_service:
                raise self._gone(ticket)
            raise RequestError(409, f"lease {lease_id!r} was {ticket.state}: there is nothing to keep alive")
        ticket.deadline = self.clock() + self.ttl
        return ticket

    def release(self, lease_id: str, outcome: str = "ok", error: str | None = None) -> Ticket:
        """End a lease (withdraw a waiting request); again on an ended one answers as the first time."""
        if outcome not in CLIENT_OUTCOMES:
            raise RequestError(422, f"outcome {outcome!r} is not one of {', '.join(CLIENT_OUTCOMES)}")
        ticket = self.find(lease_id)
        if ticket.live and ticket.lease is not None:
            self.governor.release(ticket.lease, outcome=outcome, error=error)  # type: ignore[arg-type]
        elif ticket.by_service:
            raise self._gone(ticket)
        return ticket

    def find(self, lease_id: str) -> Ticket:
        """The ticket of ``lease_id`` (404 for one never given out, or forgotten)."""
        ticket = self._live.get(lease_id) or self._ended.get(lease_id)
        if ticket is None:
            raise RequestError(
                404,
                f"no lease {lease_id!r}: this service never gave it out "
                f"(or it ended before the last {self.keep} that are remembered)",
            )
        return ticket

    def tickets(self) -> list[Ticket]:
        """The live tickets, oldest first."""
        return list(self._live.values())

    # -- expiry and stop ---------------------------------------------------------------------

    def sweep(self) -> int:
        """Expire the leases and withdraw the requests whose deadline has passed; how many."""
        now = self.clock()
        overdue = [t for t in self._live.values() if t.polls == 0 and t.deadline <= now]
        for ticket in overdue:
            if ticket.lease is None or not ticket.live:
                continue
            ticket.by_service = True
            if ticket.state == "admitted":
                why = f"no heartbeat for {self.ttl:g} s"
                self.governor.release(ticket.lease, outcome="expired", error=why)
            else:  # releasing a waiting request withdraws it, with this reason in the log
                why = f"not polled or heartbeated for {self.ttl:g} s"
                self.governor.release(ticket.lease, outcome="cancelled", error=why)
        return len(overdue)

    async def sweeping(self, every: float | None = None) -> None:
        """Sweep until cancelled, every ``every`` seconds (a tenth of the TTL, at most 1 s)."""
        period = every if every is not None else min(self.ttl / 10, 1.0)
        while True:
            await asyncio.sleep(period)
            self.sweep()

    async def stop(self) -> None:
        """Refuse new requests, withdraw the waiting ones, release the admitted ones (``cancelled``)."""
        self.stopping = True
        # the waiting first: releasing a held lease must not admit a request about to be withdrawn
        for state in ("waiting", "admitted"):
            for ticket in [t for t in self._live.values() if t.state == state]:
                if ticket.live and ticket.lease is not None:
                    ticket.by_service = True
                    self.governor.release(ticket.lease, outcome="cancelled", error="the service stopped")
        tasks = [t.task for t in self._ended.values() if t.task is not None and not t.task.done()]
        if tasks:  # the withdrawn requests' tasks end with the governor's refusal
            await asyncio.wait(tasks, timeout=1.0)
        self._unsubscribe()

    # -- inside ------------------------------------------------------------------------------

    async def _poll(self, ticket: Ticket, wait: float) -> Ticket:
        """Wait for the ticket's admission up to ``wait`` seconds; its TTL starts again after."""
        if not 0 <= wait <= MAX_WAIT:
            raise RequestError(422, f"wait {wait!r} is not between 0 and {MAX_WAIT:g} seconds")
        ticket.polls += 1
        try:
            if ticket.state == "waiting" and ticket.task is not None and wait > 0:
                await asyncio.wait({ticket.task}, timeout=wait)
        finally:
            ticket.polls -= 1
            if ticket.live:
                ticket.deadline = self.clock() + self.ttl
        if ticket.task is not None and ticket.task.done() and not ticket.task.cancelled():
            ticket.task.exception()  # retrieved: a withdrawn request's refusal is answered below
        if ticket.live:
            return ticket
        if self.stopping:
            raise RequestError(503, "the service is stopping; the request was withdrawn")
        raise self._gone(ticket)

    def _check_open(self) -> None:
        if self.stopping:
            raise RequestError(503, "the service is stopping: no new requests")

    def _check_resources(self, name: str, demand: Mapping[str, float] | None) -> None:
        """A demand on a resource the machine lacks is a typo more often than an unconstrained one."""
        machine = self.governor.machine
        for resource in demand or {}:
            if resource not in machine.capacity:
                known = ", ".join(sorted(machine.capacity))
                raise RequestError(
                    422,
                    f"call {name!r}: resource {resource!r} is not one of the machine's "
                    f"({machine.name}: {known})",
                )

    def _gone(self, ticket: Ticket) -> RequestError:
        what = "lease" if ticket.state == "expired" else "request"
        return RequestError(410, f"{what} {ticket.id!r} {ticket.state}: {ticket.error or 'ended'}")

    def _on_event(self, event: GovernorEvent) -> None:
        """The governor's listener: each ticket's state follows its lease's events."""
        lease = event.lease
        ticket: Ticket | None
        if event.kind == "requested":
            asking = _ASKING.get()
            ticket = asking if asking is not None and asking.lease is None else Ticket(lease.name)
            ticket.lease = lease
            self._live[lease.id] = ticket
            self.counts["requested"] += 1
            return
        ticket = self._live.get(lease.id)
        if ticket is None:
            return
        if event.kind == "admitted":
            ticket.lease, ticket.state = lease, "admitted"
            ticket.deadline = event.time + self.ttl
            self.counts["admitted"] += 1
            return
        if event.kind == "released":
            ticket.state = "expired" if event.outcome == "expired" else "released"
        else:  # withdrawn
            ticket.state = "withdrawn"
        ticket.ended_at, ticket.outcome, ticket.error = event.time, event.outcome, event.error
        self.counts[ticket.state] += 1
        self._end(ticket)

    def _end(self, ticket: Ticket) -> None:
        self._live.pop(ticket.id, None)
        self._ended[ticket.id] = ticket
        while len(self._ended) > self.keep:
            self._ended.popitem(last=False)


def _raise_refusal(task: asyncio.Task[Lease]) -> None:
    """The governor refused the request before registering it: its reason, as a 422."""
    if not task.done():  # it neither announced nor refused the request: never leave it behind
        task.cancel()
        raise RuntimeError("the governor did not announce the request in its first steps")
    exc = task.exception()
    if isinstance(exc, GovernorError):
        raise RequestError(422, str(exc)) from None
    if exc is not None:
        raise exc
    raise RuntimeError("the governor admitted a request it never announced")


def _retrieved(task: asyncio.Task[Lease]) -> None:
    """Mark a request's refusal as seen: a request withdrawn while nobody polls it is no error."""
    if not task.cancelled():
        task.exception()
