"""Helpers of the sidecar tests: a clock the test moves, an in-process client of the ASGI app."""

from __future__ import annotations

import contextlib
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from peakopt.models import Machine
from peakopt.runtime.sidecar_server import Service, build_service

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


def service(
    ttl: float = 10.0, *, log: Path | None = None, clock: Clock | None = None, **more: object
) -> Service:
    """A service on :data:`BOX` whose expiry sweeps only run when the test calls them."""
    return build_service(BOX, ttl=ttl, log=log, clock=clock or Clock(), sweep_every=3600.0, **more)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def client(found: Service) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the service's app, in this process (its lifespan runs around it)."""
    async with found.app.router.lifespan_context(found.app):
        transport = httpx.ASGITransport(app=found.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sidecar") as http:
            yield http


#: The line ``peakopt serve`` starts with on stderr, with the port it listens on.
SERVING = re.compile(r"^serving '.*' on http://127\.0\.0\.1:(\d+) ")


@dataclass
class Server:
    """A ``peakopt serve`` subprocess on 127.0.0.1 and a free port."""

    process: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 30.0) -> tuple[int, str]:
        """Send ``signum`` and wait for the exit; its exit code and the rest of its stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            _, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
            raise
        return self.process.returncode, err


def start_server(machine: Path, *args: str, timeout: float = 60.0) -> Server:
    """Start ``peakopt serve --machine MACHINE --port 0 ARGS`` and wait for its ``serving`` line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "peakopt.cli", "serve", "--machine", str(machine), "--port", "0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.5)
        if not ready:
            continue
        line = process.stderr.readline()
        if not line:
            break  # it exited
        seen.append(line)
        found = SERVING.match(line)
        if found:
            return Server(process, int(found.group(1)))
    process.kill()
    process.communicate()
    raise AssertionError(f"peakopt serve did not start: {''.join(seen)}")


def machine_file(folder: Path, machine: Machine = BOX) -> Path:
    """``machine`` written as a machine file in ``folder``."""
    path = folder / f"{machine.name}.json"
    path.write_text(machine.model_dump_json())
    return path
