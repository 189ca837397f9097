"""Helpers of the sidecar tests: a clock the test moves, an in-process client of the ASGI app."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from peakopt.models import Machine
from peakopt.runtime.sidecar_server import Service, build

#: The machine of the in-process tests: 1000 MiB and 2 cores.
BOX = Machine(name="box", capacity={"memory_mb": 1000, "cpu": 2})


class Clock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def service(ttl: float = 10.0, *, log: Path | None = None, clock: Clock | None = None, **more: object) -> Service:
    """A service on :data:`BOX` whose expiry sweeps only run when the test calls them."""
    return build(BOX, ttl=ttl, log=log, clock=clock or Clock(), sweep_every=3600.0, **more)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def client(found: Service) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the service's app, in this process (its lifespan runs around it)."""
    async with found.app.router.lifespan_context(found.app):
        transport = httpx.ASGITransport(app=found.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sidecar") as http:
            yield http
