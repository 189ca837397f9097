"""The reaper: a small process that ends a run's step processes however the run itself ends.

A controller (:class:`~peakopt.runtime.controller.Controller`) ends its steps' process trees
when it is cancelled (Ctrl-C, SIGTERM), but a controller killed by SIGKILL or the OOM killer
runs no clean-up at all, and ``PR_SET_PDEATHSIG`` (the campaign workers' way) reaches only a
direct child: a step's own children and grandchildren would live on, reparented to init. So the
controller starts, before its first step, one **reaper** process:

- in a session of its own, so a signal to the controller's process group does not reach it;
- holding the read end of a pipe whose only write end is the controller's: the pipe closes
  when the controller ends, however it ends (the kernel closes a dead process's files);
- told over the pipe the process group of each step as it starts (``+PGID``) and ends (``-PGID``).

Every step also runs with a marker in its environment, ``PEAKOPT_RUN_<token>=1``, which its
descendants inherit whatever group or session they move to (a daemon that double-forked with
``setsid`` included). When the pipe closes the reaper ends every process that carries the
marker and every member of a group still listed: SIGTERM, then SIGKILL to those left after
the grace period, in rounds until none is found (a process may fork meanwhile), then exits.
A controller that ends normally closes the pipe too, and waits for the reaper: a process a
step left running in the background ends with the run. (A descendant that drops its
environment, ``env -i``, and leaves its step's process group is the one it cannot find.)

Run as ``python -m peakopt.runtime.reaper TOKEN GRACE`` by :class:`Reaper`. ``peakopt profile``
starts one the same way for the runs of the command it measures.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from peakopt.models.extras import LazyModule

if TYPE_CHECKING:
    import psutil
else:
    # psutil is the runtime extra: imported on first use, not by a command's --help
    psutil = LazyModule("psutil", "measuring processes (peakopt profile, peakopt run)")

#: The prefix of the environment variable that marks a run's step processes.
MARK_PREFIX = "PEAKOPT_RUN_"
#: Rounds of ending what is found before the reaper gives up (each new round finds forks).
ROUNDS = 5


class Reaper:
    """The controller's side: starts the reaper process, tells it the steps' groups, closes it.

    Parameters
    ----------
    grace
        Seconds between SIGTERM and SIGKILL when the reaper ends what is left.
    """

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.token = secrets.token_hex(8)
        self.mark = f"{MARK_PREFIX}{self.token}"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """The environment a step runs with: this process's, and the marker."""
        return {**os.environ, self.mark: "1"}

    def start(self, *, ready: bool = False) -> None:
        """Start the reaper process (once; before the first step is started).

        ``ready``: return only once it is reading its pipe, so that its own start-up does not
        run beside a command being measured (``peakopt profile``).
        """
        if self._proc is not None:
            return
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "peakopt.runtime.reaper", self.token, repr(self.grace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE if ready else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if ready and self._proc.stdout is not None:
            self._proc.stdout.read(1)  # its one byte once started (nothing if it could not start)
            self._proc.stdout.close()

    def _tell(self, line: str) -> None:
        # one write of a whole line: atomic on a pipe (under PIPE_BUF), so a controller killed
        # at any moment never leaves the reaper half a process group id to act on
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                os.write(self._proc.stdin.fileno(), f"{line}\n".encode())

    def watch(self, pgid: int) -> None:
        """A step's process group started."""
        self._tell(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        """A step's process ended (and was reaped): its group id may be reused."""
        self._tell(f"-{pgid}")

    def close(self) -> None:
        """Close the pipe and wait for the reaper to end what the steps left running."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        proc.wait()


def _update(groups: set[int], lines: Iterable[bytes]) -> None:
    """Apply the complete ``lines`` (``+PGID``, ``-PGID``) to the listed ``groups``."""
    for line in lines:
        text = line.strip()
        # 0 and 1 would be this process's own group and init's: never a step's
        if text[:1] in (b"+", b"-") and text[1:].isdigit() and int(text[1:]) > 1:
            (groups.add if text[:1] == b"+" else groups.discard)(int(text[1:]))


def _found(mark: str, groups: set[int]) -> list[psutil.Process]:
    """The live processes (this one aside) that carry ``mark`` or belong to one of ``groups``."""
    found = []
    for process in psutil.process_iter():
        if process.pid == os.getpid():
            continue
        with contextlib.suppress(psutil.Error, OSError):
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if os.getpgid(process.pid) in groups or mark in process.environ():
                found.append(process)
    return found


def end_all(mark: str, groups: set[int], grace: float) -> None:
    """End every process that carries ``mark`` or is in one of ``groups`` (see the module docstring)."""
    for _ in range(ROUNDS):
        for group in groups:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGTERM)
        found = _found(mark, groups)
        if not found:
            return
        for process in found:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = psutil.wait_procs(found, timeout=grace)
        for group in groups:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(alive, timeout=grace)


def reap(argv: list[str]) -> None:
    """Read the pipe (stdin) to its end, then end what is left (see the module docstring)."""
    # a Ctrl-C at the terminal is the controller's to handle; the reaper's job comes after it
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    token, grace = argv[0], float(argv[1])
    with contextlib.suppress(OSError):
        os.write(1, b"\n")  # ready (see Reaper.start); stdout is /dev/null unless asked
    groups: set[int] = set()
    rest = b""
    while chunk := os.read(0, 65536):
        *lines, rest = (rest + chunk).split(b"\n")
        _update(groups, lines)
    end_all(f"{MARK_PREFIX}{token}", groups, grace)  # an unfinished last line is left out


if __name__ == "__main__":
    reap(sys.argv[1:])
