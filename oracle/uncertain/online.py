"""The online interface: a policy that decides at run time which ready steps to start.

The same interface serves the event-driven simulator of the oracle (scoring a policy under
realised durations) and the admission controller of :mod:`peakopt.runtime` (running real
tool calls): a runtime engineer writes the admission code once and both call it.

At time 0 and whenever a step finishes, the caller asks the policy which of the ready steps
to start now. A policy sees only what a runtime sees: the clock, the ready steps, the running
steps with their start times and the free capacity; never a realised duration before the step
has finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from peakopt.models import Machine, Workflow


class OnlinePolicy(Protocol):
    """Decides which ready steps start now (a callable; see :meth:`__call__`).

    A stateful policy may also have a ``skip(steps)`` method: a runtime calls it with the steps
    that will never become ready because a step they depend on failed (the controller with
    ``on_failure="continue"``), so that, say, a plan's order passes over them instead of
    waiting for them. The simulator never calls it: no step fails there.
    """

    def __call__(
        self, now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        """The ready steps to start now.

        Parameters
        ----------
        now
            The current time in seconds.
        ready
            Ids of the steps whose dependencies have all finished and that have not started, in the
            order they became ready (ties in workflow order).
        running
            Id -> start time of the steps running now.
        free
            Resource -> capacity not held by the running steps (their peak demands, clamped to the
            capacity); negative when the running steps overflow it.

        Returns
        -------
        iterable of str
            Ids among ``ready`` to start now; the others wait for the next event.
        """
        ...


#: Builds a fresh policy for one run of a workflow on a machine (from nominal data only), so a
#: stateful policy starts clean for every sampled scenario.
PolicyFactory = Callable[[Workflow, Machine | None], OnlinePolicy]
