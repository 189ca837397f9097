"""The sidecar's Prometheus metrics (``GET /metrics``), in a registry of its own.

Counters and the wait-time histogram follow the governor's events; the gauges (waiting, running,
capacity and use per resource) are read from :meth:`Governor.status` at each scrape, so they are
never stale. Names:

==================================  =========  =================================================
``peakopt_requests_total``          counter    admit requests the governor registered
``peakopt_admitted_total``          counter    leases admitted
``peakopt_released_total``          counter    leases ended, by ``outcome`` (``expired`` included)
``peakopt_withdrawn_total``         counter    requests withdrawn before admission
``peakopt_wait_seconds``            histogram  seconds from request to admission
``peakopt_waiting``                 gauge      requests waiting now
``peakopt_running``                 gauge      leases held now
``peakopt_capacity``                gauge      capacity, by ``resource``
``peakopt_in_use``                  gauge      what the leases hold (clamped), by ``resource``
==================================  =========  =================================================
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorEvent

# the *_created series (when each counter was made) say nothing a scrape needs: off, for this
# process (the service's own)
disable_created_metrics()  # type: ignore[no-untyped-call]

#: The wait-time histogram's buckets (seconds): an admission at once, to minutes in the queue.
WAIT_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)
#: The media type of the text exposition format.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Gauges(Collector):
    """The governor's state at scrape time."""

    def __init__(self, governor: Governor) -> None:
        self.governor = governor

    def collect(self) -> Iterator[Metric]:
        status = self.governor.status()
        waiting = GaugeMetricFamily("peakopt_waiting", "Requests waiting for admission now.")
        waiting.add_metric([], len(status.waiting))
        running = GaugeMetricFamily("peakopt_running", "Leases held now.")
        running.add_metric([], len(status.running))
        capacity = GaugeMetricFamily("peakopt_capacity", "The machine's capacity.", labels=["resource"])
        in_use = GaugeMetricFamily(
            "peakopt_in_use", "What the leases hold (each clamped to the capacity).", labels=["resource"]
        )
        for resource in sorted(status.capacity):
            capacity.add_metric([resource], status.capacity[resource])
            in_use.add_metric([resource], status.in_use.get(resource, 0.0))
        yield from (waiting, running, capacity, in_use)


class Metrics:
    """Prometheus metrics of one governor (subscribe :meth:`observe` to it).

    Parameters
    ----------
    governor
        Whose state the gauges read.
    """

    def __init__(self, governor: Governor) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "peakopt_requests", "Admit requests the governor registered.", registry=self.registry
        )
        self.admitted = Counter("peakopt_admitted", "Leases admitted.", registry=self.registry)
        self.released = Counter(
            "peakopt_released", "Leases ended, by outcome.", labelnames=["outcome"], registry=self.registry
        )
        self.withdrawn = Counter(
            "peakopt_withdrawn", "Requests withdrawn before admission.", registry=self.registry
        )
        self.wait = Histogram(
            "peakopt_wait_seconds",
            "Seconds from request to admission.",
            buckets=WAIT_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_Gauges(governor))

    def observe(self, event: GovernorEvent) -> None:
        """Count one governor event."""
        if event.kind == "requested":
            self.requests.inc()
        elif event.kind == "admitted":
            self.admitted.inc()
            lease = event.lease
            if lease.admitted_at is not None:
                self.wait.observe(max(0.0, lease.admitted_at - lease.requested_at))
        elif event.kind == "released":
            self.released.labels(outcome=event.outcome or "ok").inc()
        elif event.kind == "withdrawn":
            self.withdrawn.inc()

    def text(self) -> bytes:
        """The exposition of every metric."""
        return generate_latest(self.registry)
