"""Running one step of a controlled workflow: a subprocess or an async callable, and ending it.

A **command** is a string (run by ``/bin/sh -c``) or a sequence of arguments (run directly);
an **async callable** takes no argument. What it returns is one of two things: an ``int`` (not a
``bool``) is its exit code (0: success, anything else: the step failed, "returned N"); any other
value — None, a tool call's dict, a string, ``True`` — is its **result**: the step is ok and the
value is kept (:attr:`StepOutcome.result`; the controller's ``results``), never written into the
trace, which holds only what can be judged. An exception it raises fails the step. A
subprocess gets its own session and process group, no stdin and no stdout (``/dev/null``); its
stderr goes to a temporary file, whose end is kept for the trace when it fails. Cancelling a
step's coroutine ends the step's whole process tree (:func:`terminate`): SIGTERM to its group
and to every descendant seen (the tree is watched while it runs), SIGKILL after a grace
period, and the coroutine waits for them before it lets the cancellation through, so no
orphan outlives the run. With a :class:`~peakopt.runtime.reaper.Reaper`, a step runs with the
run's marker in its environment and its group is made known to the reaper, which ends what is
left when the controller itself dies (SIGKILL, the OOM killer).

A command whose program cannot be started is a failed step as the same command would be as a
shell line: exit 127 when the program is not found, 126 when it cannot be executed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from peakopt.models.extras import LazyModule
from peakopt.runtime.limits import StepLimit
from peakopt.runtime.reaper import Reaper
from peakopt.runtime.trace import StepUsage
from peakopt.runtime.tree import TreeSampler

if TYPE_CHECKING:
    import psutil
else:
    # psutil is the runtime extra: imported on first use, not by a command's --help
    psutil = LazyModule("psutil", "measuring processes (peakopt profile, peakopt run)")

#: A step's command: a shell line or an argument vector.
Command = str | Sequence[str]
#: A step run in-process: ``await step()`` gives its exit code (an int) or its result (anything else).
StepFunction = Callable[[], Awaitable[object]]
#: What a step runs.
Step = Command | StepFunction

#: How much of a failed step's stderr the trace keeps (its end).
STDERR_TAIL = 2000
#: Seconds between SIGTERM and SIGKILL when a step is cancelled.
KILL_GRACE = 2.0
#: The shell's exit codes for a program that is not found, and one found but not executable.
NOT_FOUND, NOT_EXECUTABLE = 127, 126


@dataclass(frozen=True)
class StepOutcome:
    """How a step ended: its exit code, the time it ended (monotonic), its pid, usage, error text and result.

    ``result`` is what an async callable returned when that is not an exit code (None otherwise).
    """

    exit_code: int | None
    ended: float
    pid: int | None = None
    usage: StepUsage | None = None
    error: str | None = None
    result: object = None

    @property
    def ok(self) -> bool:
        """Exit 0 and no error."""
        return self.exit_code == 0 and self.error is None


#: Called after each sample of a measured step with its peak memory so far (MiB).
PeakWatch = Callable[[float], None]


async def _sample(
    sampler: TreeSampler, interval: float, peak: list[float] | None, watch: PeakWatch | None = None
) -> None:
    """Sample until cancelled, the peak cores kept in ``peak[0]``; without ``peak``, only the tree's members.

    Knowing every process ever seen in the tree lets :func:`terminate` end a descendant that
    has since left it (a daemon that double-forked away from its parent). ``watch`` hears the
    peak memory after each sample (an over-declared step is told while it runs).
    """
    while True:
        if peak is None:
            sampler.track()
        else:
            peak[0] = max(peak[0], sampler.sample().cores)
            if watch is not None:
                watch(sampler.peak_mb)
        await asyncio.sleep(interval)


def _descendants(root: int, known: Sequence[int]) -> dict[int, psutil.Process]:
    """The live processes of ``known`` (the root aside) and every descendant of them and of the root."""
    found: dict[int, psutil.Process] = {}
    for pid in {root, *known}:
        try:
            process = psutil.Process(pid)
            children = process.children(recursive=True)
        except psutil.Error:
            continue
        if pid != root:
            found[pid] = process
        found.update((c.pid, c) for c in children)
    return found


async def terminate(
    proc: asyncio.subprocess.Process, known: Sequence[int], grace: float = KILL_GRACE
) -> None:
    """End ``proc``, its process group and every descendant (``known``: pids seen in its tree before)."""
    others: dict[int, psutil.Process] = {}
    for round_ in range(3):  # again: a process may have forked between the listing and its signal
        new = {p: x for p, x in _descendants(proc.pid, [*known, *others]).items() if p not in others}
        if round_ and not new:
            break
        others.update(new)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGTERM)
        for process in new.values():
            with contextlib.suppress(psutil.Error):
                process.terminate()
        await asyncio.sleep(0.05)
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


async def _spawn(
    command: Command, err: IO[bytes], env: dict[str, str] | None, preexec: Callable[[], None] | None = None
) -> asyncio.subprocess.Process:
    devnull = asyncio.subprocess.DEVNULL
    streams: dict[str, Any] = {"stdin": devnull, "stdout": devnull, "stderr": err}
    if isinstance(command, str):
        return await asyncio.create_subprocess_shell(
            command, **streams, start_new_session=True, env=env, preexec_fn=preexec
        )
    return await asyncio.create_subprocess_exec(
        *command, **streams, start_new_session=True, env=env, preexec_fn=preexec
    )


def _not_started(command: Sequence[str], exc: OSError) -> StepOutcome:
    """The outcome of an argument vector whose program cannot be started (the shell's exit codes)."""
    missing = isinstance(exc, FileNotFoundError | NotADirectoryError)
    why = "not found" if missing else f"cannot be run ({exc.strerror or exc})"
    return StepOutcome(
        NOT_FOUND if missing else NOT_EXECUTABLE, time.monotonic(), error=f"{command[0]}: {why}"
    )


async def run_subprocess(
    command: Command,
    *,
    measure: bool = False,
    interval: float = 0.1,
    reaper: Reaper | None = None,
    watch: PeakWatch | None = None,
    limit: StepLimit | None = None,
) -> StepOutcome:
    """Run one command to its end (see the module docstring); cancelling it ends its whole tree.

    With ``measure``, ``watch`` (if given) is called with the peak memory so far after each sample.
    With ``limit``, the command runs under that memory limit (:mod:`peakopt.runtime.limits`), and
    a step it ends fails with an error that says so.
    """
    with limit or contextlib.nullcontext():
        outcome = await _run_subprocess(command, measure, interval, reaper, watch, limit)
    return outcome


async def _run_subprocess(
    command: Command,
    measure: bool,
    interval: float,
    reaper: Reaper | None,
    watch: PeakWatch | None,
    limit: StepLimit | None,
) -> StepOutcome:
    # stderr goes to a file, not a pipe: a step ends when its process does, even if a daemon it
    # left behind keeps the stream open, and no pipe outlives an interrupted event loop
    with tempfile.TemporaryFile() as err:
        try:
            env = reaper.env if reaper is not None else None
            proc = await _spawn(command, err, env, limit.preexec if limit is not None else None)
        except OSError as exc:
            if isinstance(command, str):
                raise  # the shell itself cannot be started: nothing a step can do about it
            return _not_started(command, exc)
        if reaper is not None:
            reaper.watch(proc.pid)  # its own session: the group id is its pid
        started = time.monotonic()
        sampler = TreeSampler(proc.pid, started)
        peak = [0.0] if measure else None
        sampling = asyncio.create_task(_sample(sampler, interval, peak, watch))
        try:
            code = await proc.wait()
        except BaseException:
            if proc.returncode is None:
                await terminate(proc, sorted(sampler.pids))
            raise
        finally:
            sampling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampling
            if reaper is not None and proc.returncode is not None:
                reaper.forget(proc.pid)
        err.seek(max(0, err.seek(0, os.SEEK_END) - STDERR_TAIL))
        tail = err.read()
    ended = time.monotonic()
    usage = None
    if peak is not None:
        seconds = ended - started
        cpu = sampler.cpu_seconds
        usage = StepUsage(
            cpu_avg=round(cpu / seconds, 3) if seconds > 0 else 0.0,
            cpu_peak=round(peak[0], 3),
            memory_peak_mb=round(sampler.peak_mb, 1),
        )
    text = tail.decode(errors="replace").strip()
    error = (text or f"exited with {code}") if code else None
    if code and limit is not None:
        error = limit.error(code, text) or error
    return StepOutcome(code, ended, proc.pid, usage, error)


async def run_step(
    step: Step,
    *,
    measure: bool = False,
    interval: float = 0.1,
    reaper: Reaper | None = None,
    watch: PeakWatch | None = None,
    limit: StepLimit | None = None,
) -> StepOutcome:
    """Run a command (:func:`run_subprocess`) or await an async callable (nothing measured or limited)."""
    if callable(step):
        try:
            value = await step()
        except Exception as exc:  # a step's own failure is the trace's to record, not the run's
            return StepOutcome(None, time.monotonic(), error=f"{type(exc).__name__}: {exc}")
        return called(value, time.monotonic())
    return await run_subprocess(
        step, measure=measure, interval=interval, reaper=reaper, watch=watch, limit=limit
    )


def called(value: object, ended: float) -> StepOutcome:
    """The outcome of an async callable that returned ``value``: an exit code (an int), else its result."""
    # bool is an int to Python, but a tool that answers True has answered, not exited with 1
    if isinstance(value, int) and not isinstance(value, bool):
        return StepOutcome(value, ended, error=f"returned {value}" if value else None)
    return StepOutcome(0, ended, result=value)
