"""What the governor hands out and reports: leases, events, its status, and the policies it knows by name.

A :class:`Lease` is one admitted call (or, in a ``requested`` event and in
:attr:`GovernorStatus.waiting`, one call still waiting: ``admitted_at`` None). Times are the
governor's clock (``time.monotonic`` by default), not seconds since a start.

The named policies decide on ids alone, since the calls of a dynamic workflow are not known in
advance (the planned orders of :mod:`peakopt.runtime.policies` need the whole workflow: declare
it, :mod:`peakopt.runtime.declared`):

- ``admission`` (the default): every ready call, in ready order; the guard admits each that
  fits, later ones overtaking one that does not (within the fairness bound);
- ``admission:strict``: the same, but the first call that does not fit blocks the later ones
  (head-of-line blocking: strict FIFO);
- ``cap:K``: ready order while fewer than K calls run (a count cap, as the agent SDKs'), under
  the guard too; ``serial`` is ``cap:1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from peakopt.models import PeakoptError

#: How a call ended: its body returned, raised, was cancelled, or its lease ran out (a sidecar's TTL).
CallOutcome = Literal["ok", "failed", "cancelled", "expired"]
OUTCOMES: tuple[CallOutcome, ...] = ("ok", "failed", "cancelled", "expired")
#: What happened: a call asked, was admitted, ended (``released``), or gave up waiting (``withdrawn``).
EventKind = Literal["requested", "admitted", "released", "withdrawn"]
#: The policies known by name (``cap:K`` for any K >= 1).
POLICY_NAMES = ("admission", "admission:strict", "cap:K", "serial")


class GovernorError(PeakoptError):
    """A call the governor cannot admit: no demand known, a bad demand or policy, an unknown dependency."""


@dataclass(frozen=True)
class Lease:
    """One call of a governor: admitted (``admitted_at`` set) or still waiting.

    Parameters
    ----------
    id
        Unique in its governor: the call's name, ``name#2``, ``name#3``... for repeats.
    name, tool
        As requested (``tool`` None when not given).
    demand
        Resource -> amount at its peak, as requested (declared, or the profile store's); the
        governor holds it clamped to each capacity while the call runs.
    requested_at, admitted_at
        On the governor's clock; ``admitted_at`` None while the call waits.
    depends_on
        Ids of the earlier calls it waited for.
    expected
        Its expected duration in seconds (declared, or the store's), if known.
    """

    id: str
    name: str
    tool: str | None
    demand: Mapping[str, float] = field(hash=False)  # a dict: leases hash by the other fields
    requested_at: float = 0.0
    admitted_at: float | None = None
    depends_on: tuple[str, ...] = ()
    expected: float | None = None

    @property
    def wait(self) -> float | None:
        """Seconds between the request and the admission (None while waiting)."""
        return None if self.admitted_at is None else self.admitted_at - self.requested_at


@dataclass(frozen=True)
class GovernorEvent:
    """One event of a governor, delivered to its subscribers in the order it happened.

    Parameters
    ----------
    kind
        ``requested``, ``admitted``, ``released`` or ``withdrawn`` (a waiting call cancelled or timed out).
    lease
        The call (``admitted_at`` None in ``requested`` and ``withdrawn`` events).
    time
        When, on the governor's clock.
    outcome, error
        How a released call ended, and why it failed (``released`` events only).
    usage
        What a released call was measured to use, when its release said.
    """

    kind: EventKind
    lease: Lease
    time: float
    outcome: CallOutcome | None = None
    error: str | None = None
    usage: Mapping[str, float] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class GovernorStatus:
    """A governor's state at one instant.

    Parameters
    ----------
    capacity
        The machine's capacities.
    in_use
        Per resource, what the running calls hold (their clamped peaks).
    running, waiting
        The calls running and the calls waiting (ready or not), oldest first.
    admitted, released
        How many calls have been admitted and released so far.
    """

    capacity: Mapping[str, float]
    in_use: Mapping[str, float]
    running: tuple[Lease, ...]
    waiting: tuple[Lease, ...]
    admitted: int = 0
    released: int = 0
    policy: str = "admission"
    meta: Mapping[str, object] = field(default_factory=dict)


class ReadyOrder:
    """``admission``: every ready call, in ready order (the guard admits those that fit)."""

    strict = False

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """Every ready call."""
        return ready


class StrictOrder(ReadyOrder):
    """``admission:strict``: ready order, the first call that does not fit blocking the later ones."""

    strict = True


class CountCap:
    """``cap:K``: ready order while fewer than ``limit`` calls run."""

    strict = False

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """The first ready calls that keep at most ``limit`` running."""
        return ready[: max(0, self.limit - len(running))]


def named_live_policy(name: str) -> ReadyOrder | CountCap:
    """The policy ``name`` for dynamic calls (see the module docstring).

    Raises
    ------
    GovernorError
        For another name, listing the known ones.
    """
    if name == "admission":
        return ReadyOrder()
    if name == "admission:strict":
        return StrictOrder()
    if name == "serial":
        return CountCap(1)
    head, _, rest = name.partition(":")
    if head == "cap" and rest.isdigit() and int(rest) >= 1:
        return CountCap(int(rest))
    raise GovernorError(f"policy {name!r} is not one for live calls (known: {', '.join(POLICY_NAMES)})")
