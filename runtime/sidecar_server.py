"""Running the sidecar: the governor, its leases, log and metrics as one service, served by uvicorn.

:func:`build_service` wires a :class:`~peakopt.runtime.governor.Governor` to a
:class:`~peakopt.runtime.sidecar.Sidecar`, the event log and the metrics, and makes the ASGI app;
:func:`listen` binds the socket first (so a port in use is one error before anything starts, and
port 0 picks a free one that is known before serving); :func:`run_service` runs uvicorn on it until
SIGINT or SIGTERM. On the signal the sidecar stops at once — long polls answer 503, waiting
requests are withdrawn, held leases released (``cancelled``, "the service stopped") — so that
uvicorn's graceful shutdown has no poll to wait for; the signal is returned, not re-raised, for
the command to report. Everything runs in this one process: nothing outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import FastAPI

from peakopt.models import Machine
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError
from peakopt.runtime.profiles import ProfileStore
from peakopt.runtime.sidecar import Sidecar
from peakopt.runtime.sidecar_api import create_app
from peakopt.runtime.sidecar_log import EventLog
from peakopt.runtime.sidecar_metrics import Metrics
from peakopt.runtime.trace import trace_json

#: Seconds uvicorn waits for open requests once stopping (polls have been answered by then).
SHUTDOWN_GRACE = 5

#: Seconds an idle keep-alive connection is kept open: longer than clients keep theirs (httpx 5 s,
#: aiohttp 15 s), so that a client never sends on a connection the server is closing.
KEEP_ALIVE = 75
#: The signals that stop the service.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class Service:
    """One sidecar: its governor, leases, metrics, event log (None without one) and ASGI app."""

    governor: Governor
    sidecar: Sidecar
    metrics: Metrics
    log: EventLog | None
    app: FastAPI

    def __post_init__(self) -> None:
        self._snapshot: tuple[str | None] | None = None

    def trace_json(self) -> str | None:
        """The trace of every call that ended, as JSON (None when none has).

        Once :meth:`snapshot` has been taken, that one: the calls the stop released (still held
        by clients when the service stopped, their true end unknown) are not in it.
        """
        if self._snapshot is not None:
            return self._snapshot[0]
        try:
            return trace_json(self.governor.trace())
        except GovernorError:
            return None

    def snapshot(self) -> None:
        """Keep the trace as it is now (before the stop releases the held leases)."""
        if self._snapshot is None:
            self._snapshot = (self.trace_json(),)

    async def stop(self) -> None:
        """The trace as it is, then the sidecar stops (see :meth:`Sidecar.stop`)."""
        self.snapshot()
        await self.sidecar.stop()

    def close(self) -> None:
        """Write the log's ``stop`` line (with the counts) and close it."""
        if self.log is not None:
            self.log.stop(self.sidecar.clock() - self.sidecar.t0, self.sidecar.counts)


def build_service(
    machine: Machine,
    *,
    ttl: float,
    policy: str = "admission",
    profiles: ProfileStore | None = None,
    log: str | Path | None = None,
    clock: Callable[[], float] = time.monotonic,
    sweep_every: float | None = None,
) -> Service:
    """A service for ``machine``: leases that expire after ``ttl`` seconds without a heartbeat.

    Parameters
    ----------
    machine
        The capacities every request is admitted under.
    ttl
        Seconds a lease lives without a heartbeat.
    policy, profiles, clock
        The governor's.
    log
        The event log to append to (None: none).
    sweep_every
        Seconds between expiry sweeps (a tenth of the TTL, at most 1 s, by default).
    """
    governor = Governor(machine, policy=policy, profiles=profiles, clock=clock)
    sidecar = Sidecar(governor, ttl=ttl)
    events = None
    if log is not None:
        events = EventLog(log, sidecar.t0)
        events.start(machine, ttl=ttl, policy=policy)
        governor.subscribe(events)
    metrics = Metrics(governor)
    governor.subscribe(metrics.observe)
    made: list[Service] = []
    app = create_app(sidecar, metrics, sweep_every=sweep_every, stop=lambda: made[0].stop())
    made.append(Service(governor, sidecar, metrics, events, app))
    return made[0]


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one; see ``getsockname``).

    Raises
    ------
    OSError
        When the address cannot be bound (in use, not this machine's).
    """
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
        sock.set_inheritable(False)
    except OSError:
        sock.close()
        raise
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server that stops the sidecar on the signal, and returns the signal, not re-raises it."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stop = on_stop
        self.received: list[int] = []

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM stop serving while it runs; the handlers before are back afterwards."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        saved = {signum: signal.signal(signum, self.handle_exit) for signum in STOP_SIGNALS}
        try:
            yield
        finally:
            for signum, handler in saved.items():
                signal.signal(signum, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The first signal stops the sidecar and the server; a second SIGINT forces the exit."""
        if not self.received:
            self.on_stop()
        self.received.append(sig)
        super().handle_exit(sig, frame)


def run_service(service: Service, sock: socket.socket) -> int | None:
    """Serve until SIGINT or SIGTERM (or :attr:`uvicorn.Server.should_exit`); the signal, if one."""
    loop_box: list[asyncio.AbstractEventLoop] = []

    def on_stop() -> None:
        # a signal handler runs between two steps of the loop's own thread: schedule, do not call
        if loop_box:
            loop_box[0].call_soon_threadsafe(lambda: asyncio.ensure_future(service.stop()))

    config = uvicorn.Config(
        service.app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        timeout_keep_alive=KEEP_ALIVE,
        log_config=None,
    )
    server = _Server(config, on_stop)

    async def main() -> None:
        loop_box.append(asyncio.get_running_loop())
        await server.serve(sockets=[sock])

    try:
        asyncio.run(main())
    finally:
        sock.close()
    return server.received[0] if server.received else None
