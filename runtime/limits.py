"""A hard memory limit per subprocess step at its declared memory: a lying step is killed, not the machine.

``peakopt run --limit-memory`` (``Controller(limit_memory=...)``) runs each subprocess step whose
task declares ``memory_mb`` under a limit of that many MiB:

- **cgroup** (where :func:`~peakopt.runtime.cgroups.detect` finds a writable hierarchy): the
  step runs in a child cgroup of its own with ``memory.max`` (v2) or ``memory.limit_in_bytes``
  (v1) at its declaration; every process it starts stays in it, and when they use more the
  kernel's OOM killer ends one of them inside the cgroup only. The cgroup is removed afterwards.
  A step that ended by a kill while its cgroup counted an OOM kill (``memory.events`` v2,
  ``memory.oom_control`` v1) or hit its limit (``memory.failcnt``, v1) failed with the error
  "exceeded its declared memory".
- **rlimit** (where cgroups cannot be used, or forced: ``PEAKOPT_LIMIT_MEMORY=rlimit``): the
  step's processes get ``RLIMIT_AS`` at its declaration — an allocation past it fails
  (``MemoryError`` in Python, ``ENOMEM`` in C), so the step fails on its own. Address space is
  not resident memory (libraries and thread stacks reserve more than they touch), so this is a
  coarser limit: declare with room.

A step that declares no ``memory_mb`` runs without a limit; async callables are never limited.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from peakopt.models import PeakoptError
from peakopt.runtime.cgroup_v1 import remove_cgroup
from peakopt.runtime.cgroups import detect, detect_v2

#: How steps are limited: cgroups where available else RLIMIT_AS, or one of them.
LimitMode = Literal["auto", "cgroup", "rlimit"]
LIMIT_MODES: tuple[LimitMode, ...] = ("auto", "cgroup", "rlimit")
#: The environment variable that forces a mode (``rlimit``: the fallback, e.g. to test it).
LIMIT_ENV = "PEAKOPT_LIMIT_MEMORY"
#: What the error of a step killed at its limit starts with.
EXCEEDED = "exceeded its declared memory"

_counter = itertools.count()


class LimitError(PeakoptError):
    """Memory limits asked for where they cannot be set (``cgroup`` without a writable hierarchy)."""


@dataclass(frozen=True)
class Limiter:
    """Where the steps' limits go: a cgroup parent folder (v1 or v2), or none (RLIMIT_AS)."""

    how: str
    parent: Path | None = None
    v1: bool = False

    def step(self, mib: float) -> StepLimit:
        """The limit of one step at ``mib`` MiB (a context manager: set up on entry, removed on exit)."""
        return StepLimit(self, int(mib * 2**20))


def limiter(mode: LimitMode = "auto") -> Limiter:
    """How this process can limit its steps (see the module docstring); ``PEAKOPT_LIMIT_MEMORY`` overrides.

    Raises
    ------
    LimitError
        With ``cgroup`` where no writable memory cgroup hierarchy is found (saying why).
    """
    forced = os.environ.get(LIMIT_ENV, "")
    if forced in LIMIT_MODES:
        mode = forced
    if mode == "rlimit":
        return Limiter("RLIMIT_AS")
    found = detect_v2()
    if found.parent is not None:
        return Limiter("cgroup v2 memory.max", found.parent)
    v1 = detect()
    if v1.parent is not None and v1.v1:
        return Limiter("cgroup v1 memory.limit_in_bytes", v1.v1["memory"], v1=True)
    if mode == "cgroup":
        raise LimitError(f"no cgroup can limit the steps' memory here: {v1.reason}")
    return Limiter("RLIMIT_AS")


class StepLimit:
    """One step's memory limit: its own cgroup, or RLIMIT_AS in the child (see :class:`Limiter`)."""

    def __init__(self, limiter: Limiter, limit: int) -> None:
        self.limiter, self.limit = limiter, limit
        parent = limiter.parent
        self.path = None if parent is None else parent / f"peakopt-limit-{os.getpid()}-{next(_counter)}"

    def __enter__(self) -> StepLimit:
        if self.path is not None:
            self.path.mkdir()
            name = "memory.limit_in_bytes" if self.limiter.v1 else "memory.max"
            try:
                (self.path / name).write_text(str(self.limit))
                swap = self.path / ("memory.memsw.limit_in_bytes" if self.limiter.v1 else "memory.swap.max")
                with contextlib.suppress(OSError):  # no swap accounting: nothing to swap to either
                    swap.write_text(str(self.limit) if self.limiter.v1 else "0")
            except BaseException:
                self.remove()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    @property
    def preexec(self) -> Callable[[], None]:
        """What the child runs between fork and exec: join the cgroup, or set RLIMIT_AS."""
        path, limit = self.path, self.limit

        def enter() -> None:
            if path is not None:
                (path / "cgroup.procs").write_text(str(os.getpid()))
            else:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        return enter

    def hit(self) -> bool:
        """Whether the kernel killed a process of the cgroup for its limit (or it reached it, v1)."""
        if self.path is None:
            return False
        if self.limiter.v1:
            kills = _counted(self.path / "memory.oom_control", "oom_kill")
            return kills > 0 or _number(self.path / "memory.failcnt") > 0
        return _counted(self.path / "memory.events", "oom_kill") > 0

    def error(self, code: int, tail: str) -> str | None:
        """The step's error when its limit ended it (None: it ended otherwise)."""
        mib = f"{self.limit / 2**20:g} MiB"
        if self.path is not None:
            killed = code < 0 or code == 128 + 9  # SIGKILL, seen directly or through a shell
            if killed and self.hit():
                return f"{EXCEEDED} (memory_mb {mib}): killed at its {self.limiter.how} limit"
            return None
        if code and ("MemoryError" in tail or "Cannot allocate memory" in tail or "bad_alloc" in tail):
            return f"{EXCEEDED} (memory_mb {mib}): an allocation failed at its RLIMIT_AS limit"
        return None

    def remove(self) -> None:
        """Remove the cgroup (the processes left in it moved to the parent first, v1)."""
        if self.path is None:
            return
        if self.limiter.v1:
            remove_cgroup(self.path)
            return
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    raise
                time.sleep(0.02)  # its last process is still exiting


def _counted(path: Path, key: str) -> int:
    """The number on the ``key`` line of a flat-keyed cgroup file (0 when absent or unreadable)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _number(path: Path) -> int:
    try:
        text = path.read_text().strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0
