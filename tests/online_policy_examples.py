"""An online policy factory for the ``score --execute module:function`` tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from peakopt.models import Machine, Workflow
from peakopt.oracle.online import OnlinePolicy


def one_at_a_time(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
    """A fresh policy that starts one ready step when nothing runs (serial execution)."""

    def policy(
        now: float, ready: Sequence[str], running: Mapping[str, float], free: Mapping[str, float]
    ) -> Iterable[str]:
        return ready[:1] if not running else ()

    return policy
