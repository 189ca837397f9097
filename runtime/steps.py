"""Running one step of a controlled workflow: a subprocess or an async callable, and ending it.

A **command** is a string (run by ``/bin/sh -c``) or a sequence of arguments (run directly);
an **async callable** takes no argument and returns an exit code (None or 0: success). A
subprocess gets its own session and process group, no stdin and no stdout (``/dev/null``); the
end of its stderr is kept for the trace when it fails. Cancelling a step's coroutine ends the
step's whole process tree (:func:`terminate`): SIGTERM to its group and to every descendant
seen, SIGKILL after a grace period, and the coroutine waits for them before it lets the
cancellation through, so no orphan outlives the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import psutil

from peakopt.runtime.trace import StepUsage
from peakopt.runtime.tree import TreeSampler

#: A step's command: a shell line or an argument vector.
Command = str | Sequence[str]
#: A step run in-process: ``await step()`` gives its exit code (None means 0).
StepFunction = Callable[[], Awaitable[int | None]]
#: What a step runs.
Step = Command | StepFunction

#: How much of a failed step's stderr the trace keeps (its end).
STDERR_TAIL = 2000
#: Seconds between SIGTERM and SIGKILL when a step is cancelled.
KILL_GRACE = 2.0


@dataclass(frozen=True)
class StepOutcome:
    """How a step ended: its exit code, the time it ended (monotonic), its pid, usage and error text."""

    exit_code: int | None
    ended: float
    pid: int | None = None
    usage: StepUsage | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Exit 0 and no error."""
        return self.exit_code == 0 and self.error is None


async def _sample(sampler: TreeSampler, interval: float, peak: list[float]) -> None:
    """Sample until cancelled, keeping the peak cores in ``peak[0]``."""
    while True:
        peak[0] = max(peak[0], sampler.sample().cores)
        await asyncio.sleep(interval)


async def _tail(stream: asyncio.StreamReader | None) -> bytes:
    kept = b""
    while stream is not None and (chunk := await stream.read(65536)):
        kept = (kept + chunk)[-STDERR_TAIL:]
    return kept


async def terminate(
    proc: asyncio.subprocess.Process, known: Sequence[int], grace: float = KILL_GRACE
) -> None:
    """End ``proc``, its process group and every descendant (``known``: pids seen in its tree before)."""
    others: dict[int, psutil.Process] = {}
    for pid in {proc.pid, *known}:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            if pid != proc.pid:
                others[pid] = root
            others.update((c.pid, c) for c in root.children(recursive=True))
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGTERM)
    for process in others.values():
        with contextlib.suppress(psutil.Error):
            process.terminate()
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
    # the direct child is reaped by asyncio above; the others are not ours to wait for, only to end
    _, alive = await asyncio.to_thread(psutil.wait_procs, list(others.values()), grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()


async def run_subprocess(
    command: Command,
    *,
    measure: bool = False,
    interval: float = 0.1,
    on_start: Callable[[int], None] | None = None,
) -> StepOutcome:
    """Run one command to its end (see the module docstring); cancelling it ends its whole tree."""
    devnull, pipe = asyncio.subprocess.DEVNULL, asyncio.subprocess.PIPE
    if isinstance(command, str):
        proc = await asyncio.create_subprocess_shell(
            command, stdin=devnull, stdout=devnull, stderr=pipe, start_new_session=True
        )
    else:
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=devnull, stdout=devnull, stderr=pipe, start_new_session=True
        )
    started = time.monotonic()
    if on_start is not None:
        on_start(proc.pid)
    sampler = TreeSampler(proc.pid, started)
    peak = [0.0]
    watch = asyncio.create_task(_sample(sampler, interval, peak)) if measure else None
    try:
        tail = await _tail(proc.stderr)
        code = await proc.wait()
    except BaseException:
        if proc.returncode is None:
            await terminate(proc, sorted(sampler.pids))
        raise
    finally:
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
    ended = time.monotonic()
    usage = None
    if measure:
        seconds = ended - started
        cpu = sampler.cpu_seconds
        usage = StepUsage(
            cpu_avg=round(cpu / seconds, 3) if seconds > 0 else 0.0,
            cpu_peak=round(peak[0], 3),
            memory_peak_mb=round(sampler.peak_mb, 1),
        )
    error = (tail.decode(errors="replace").strip() or f"exited with {code}") if code else None
    return StepOutcome(code, ended, proc.pid, usage, error)


async def run_step(step: Step, **options: object) -> StepOutcome:
    """Run a command (:func:`run_subprocess`, with ``options``) or await an async callable."""
    if callable(step):
        try:
            code = await step()
        except Exception as exc:  # a step's own failure is the trace's to record, not the run's
            return StepOutcome(None, time.monotonic(), error=f"{type(exc).__name__}: {exc}")
        return StepOutcome(
            0 if code is None else code, time.monotonic(), error=None if not code else f"returned {code}"
        )
    return await run_subprocess(step, **options)  # type: ignore[arg-type]
