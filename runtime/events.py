"""Delivering a governor's events to its subscribers: in order, outside the governor's lock.

The governor appends each event while it holds its lock (so the queue is in the order things
happened), then, once it has let the lock go, :meth:`EventHub.deliver` hands the queued events
to the listeners, one event at a time, from whichever thread gets there first. A listener may
call the governor (its events are delivered by the loop already running); an exception in one
is logged, never raised into the call that caused the event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from peakopt.runtime.leases import GovernorEvent

log = logging.getLogger(__name__)

#: A subscriber: called with every event, in order.
Listener = Callable[[GovernorEvent], None]


class EventHub:
    """The listeners of one governor and the events not delivered yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._delivery = threading.Lock()
        self._local = threading.local()
        self._listeners: list[Listener] = []
        self._events: list[GovernorEvent] = []

    @property
    def listened(self) -> bool:
        """Whether anyone listens (no event is built otherwise)."""
        return bool(self._listeners)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener``; the function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def put(self, event: GovernorEvent) -> None:
        """Queue an event (the governor's lock held: the queue keeps the order of events)."""
        with self._lock:
            self._events.append(event)

    def deliver(self) -> None:
        """Hand every queued event to the listeners, in order (see the module docstring)."""
        if not self._events or getattr(self._local, "delivering", False):
            return  # a listener's own call: the loop below delivers its events too
        self._local.delivering = True
        try:
            while True:
                with self._delivery:
                    with self._lock:
                        events, self._events = self._events, []
                        listeners = list(self._listeners)
                    if not events:
                        return
                    for event in events:
                        for listener in listeners:
                            try:
                                listener(event)
                            except Exception:
                                log.exception(
                                    "a governor listener raised on %s %s", event.kind, event.lease.id
                                )
        finally:
            self._local.delivering = False
