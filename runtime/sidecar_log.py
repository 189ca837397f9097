"""The sidecar's own event log (JSON Lines), and the invariants read back from it.

``peakopt serve --log FILE`` appends one line per event of its governor, flushed as it happens
(``tail -f`` shows them live; a service that is killed keeps every line written so far):

- ``start``: the machine, the TTL and the policy, the wall-clock time and the process id;
- ``requested``, ``admitted``, ``released``, ``expired`` (a lease released by the service because
  its client stopped heartbeating) and ``withdrawn`` (a request that left the queue before it was
  admitted: released by its client, not polled again within the TTL, or the service stopping),
  each with the lease id, its name, tool and demand, and for an end the outcome and the error;
- ``stop``: the counts, when the service stops cleanly.

``t`` is seconds since the service started, on its monotonic clock. A restarted service appends
a new ``start`` line: :func:`read_runs` splits a log into its runs.

:func:`check_run` replays one run: the load of every resource (each lease holds its demand
clamped to the capacity, :func:`~peakopt.oracle.uncertain.dispatch.clamped_needs`, as the governor does)
after every admission, and whether each request ended.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from peakopt.models import Machine
from peakopt.oracle.uncertain.dispatch import LOAD_SLACK, clamped_needs, fits
from peakopt.runtime.leases import GovernorEvent

#: The kinds of line of a log, in a lease's order (``expired`` and ``withdrawn`` end one too).
EVENT_KINDS = ("start", "requested", "admitted", "released", "expired", "withdrawn", "stop")
#: The kinds that end a request.
ENDS = ("released", "expired", "withdrawn")


def event_line(event: GovernorEvent, t0: float) -> dict[str, Any]:
    """The log line of one governor event (``t``: seconds since ``t0`` on the governor's clock)."""
    lease = event.lease
    kind = "expired" if event.kind == "released" and event.outcome == "expired" else event.kind
    line: dict[str, Any] = {
        "event": kind,
        "t": round(event.time - t0, 6),
        "id": lease.id,
        "name": lease.name,
        "tool": lease.tool,
        "demand": dict(lease.demand),
    }
    if kind == "requested":
        line["depends_on"] = list(getattr(lease, "depends_on", ()))
        line["expected"] = getattr(lease, "expected", None)
    if kind == "admitted" and lease.admitted_at is not None:
        line["wait"] = round(lease.admitted_at - lease.requested_at, 6)
    if kind in ENDS:
        line["outcome"] = event.outcome
        line["error"] = event.error
    return line


class EventLog:
    """Appends the sidecar's events to a file, one JSON object a line, flushed at once.

    Parameters
    ----------
    path
        The log; created when missing, appended to otherwise.
    t0
        The service's start on the governor's clock (``t`` of each line counts from it).
    """

    def __init__(self, path: str | Path, t0: float) -> None:
        self.path = Path(path)
        self.t0 = t0
        self._lock = threading.Lock()  # listeners may run in tool threads; lines never interleave
        self._out: IO[str] | None = self.path.open("a", encoding="utf-8")

    def write(self, line: Mapping[str, Any]) -> None:
        """Append one line (nothing once closed)."""
        text = json.dumps(line, separators=(",", ":"), allow_nan=False) + "\n"
        with self._lock:
            if self._out is not None:
                self._out.write(text)
                self._out.flush()

    def start(self, machine: Machine, *, ttl: float, policy: str) -> None:
        """The run's first line."""
        self.write(
            {
                "event": "start",
                "t": 0.0,
                "time": datetime.datetime.now(datetime.UTC).isoformat(),
                "pid": os.getpid(),
                "machine": machine.model_dump(mode="json", exclude_defaults=True),
                "ttl": ttl,
                "policy": policy,
            }
        )

    def __call__(self, event: GovernorEvent) -> None:
        """The governor's listener: one line per event."""
        self.write(event_line(event, self.t0))

    def stop(self, t: float, counts: Mapping[str, int]) -> None:
        """The run's last line, then the file is closed."""
        self.write({"event": "stop", "t": round(t, 6), "counts": dict(counts)})
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None


def read_runs(path: str | Path) -> list[list[dict[str, Any]]]:
    """The log's lines, split into runs at each ``start`` line (lines before the first are dropped)."""
    runs: list[list[dict[str, Any]]] = []
    with Path(path).open(encoding="utf-8") as lines:
        for text in lines:
            if not text.strip():
                continue
            line = json.loads(text)
            if line.get("event") == "start":
                runs.append([])
            if runs:
                runs[-1].append(line)
    return runs


@dataclass
class RunCheck:
    """What one run of the log shows (see :func:`check_run`).

    Attributes
    ----------
    machine
        The machine of its ``start`` line.
    counts
        Lines per kind.
    peak
        Per resource, the highest clamped load after any admission.
    over
        ``(t, resource, load)`` for each admission that took a load past its capacity.
    unended
        Ids requested that have no ``released``, ``expired`` or ``withdrawn`` line.
    out_of_order
        Lines that do not follow a lease's order (an admission not requested, an end twice...).
    waits
        Lease id -> seconds from request to admission.
    free_on_arrival
        The ids requested while the capacity was free for them: they fit what the leases left,
        no other request was waiting and none of their dependencies was pending.
    stopped
        Whether the run ends with a ``stop`` line.
    """

    machine: Machine
    counts: dict[str, int] = field(default_factory=dict)
    peak: dict[str, float] = field(default_factory=dict)
    over: list[tuple[float, str, float]] = field(default_factory=list)
    unended: list[str] = field(default_factory=list)
    out_of_order: list[str] = field(default_factory=list)
    waits: dict[str, float] = field(default_factory=dict)
    free_on_arrival: set[str] = field(default_factory=set)
    stopped: bool = False


def check_run(lines: Iterable[Mapping[str, Any]]) -> RunCheck:
    """Replay one run of the log (its ``start`` line first): loads, ends and waits."""
    found = iter(lines)
    first = next(found)
    machine = Machine.model_validate(first["machine"])
    resources = sorted(machine.capacity)
    index = {r: k for k, r in enumerate(resources)}
    capacity = [machine.capacity[r] for r in resources]
    check = RunCheck(machine, counts={"start": 1}, peak=dict.fromkeys(resources, 0.0))
    load = [0.0] * len(resources)
    state: dict[str, str] = {}
    held: dict[str, tuple[tuple[int, float, float], ...]] = {}
    asked: dict[str, float] = {}
    queued = 0  # requests waiting now
    for line in found:
        kind, lease = line["event"], line.get("id", "")
        check.counts[kind] = check.counts.get(kind, 0) + 1
        if kind == "stop":
            check.stopped = True
            continue
        needs = clamped_needs(line.get("demand", {}), index, capacity)
        if kind == "requested":
            if lease in state:
                check.out_of_order.append(f"{lease} requested twice")
            free = [c - used for c, used in zip(capacity, load, strict=True)]
            if not queued and not line.get("depends_on") and fits(needs, free):
                check.free_on_arrival.add(lease)
            state[lease], asked[lease] = "waiting", line["t"]
            queued += 1
        elif kind == "admitted":
            if state.get(lease) != "waiting":
                check.out_of_order.append(f"{lease} admitted while {state.get(lease, 'unknown')}")
            queued -= state.get(lease) == "waiting"
            state[lease], held[lease] = "running", needs
            check.waits[lease] = line["t"] - asked.get(lease, line["t"])
            _add(check, resources, capacity, load, needs, line["t"])
        elif kind in ENDS:
            expected = "waiting" if kind == "withdrawn" else "running"
            if state.get(lease) != expected:
                check.out_of_order.append(f"{lease} {kind} while {state.get(lease, 'unknown')}")
            for k, amount, _ in held.pop(lease, ()):
                load[k] -= amount
            queued -= state.get(lease) == "waiting"
            state[lease] = "ended"
    check.unended = sorted(lease for lease, where in state.items() if where != "ended")
    return check


def _add(
    check: RunCheck,
    resources: list[str],
    capacity: list[float],
    load: list[float],
    needs: tuple[tuple[int, float, float], ...],
    t: float,
) -> None:
    """Take an admitted lease's needs; note a load past capacity (beyond the guard's slack)."""
    for k, amount, _ in needs:
        load[k] += amount
        resource = resources[k]
        check.peak[resource] = max(check.peak[resource], load[k])
        if load[k] > capacity[k] * (1 + LOAD_SLACK):
            check.over.append((t, resource, load[k]))
