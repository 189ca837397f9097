"""cgroup accounting: a fresh cgroup per measured command, read from the kernel's own counters.

Where a cgroup v2 hierarchy is mounted and the process's own cgroup delegates the ``memory`` and
``cpu`` controllers to children it may create (``cgroup.subtree_control``, writable), a command
runs in a child cgroup of its own: every process it starts stays in it, whatever it does
(``setsid``, double forks), and the kernel counts exactly what they use. ``memory.peak`` (kernel
5.19 or later) is the exact peak of all memory charged (page cache included), ``cpu.stat``'s
``usage_usec`` the exact CPU time; the samples over time read ``memory.current`` less the page
cache of files (``memory.stat``'s ``active_file`` + ``inactive_file``: the kernel drops it under
pressure, as with v1) and ``usage_usec``.

Elsewhere — a cgroup v1 machine, or a hybrid one whose v2 hierarchy has no controllers — the
v1 hierarchies are used the same way where the process's own memory and cpuacct cgroups are
writable (:mod:`peakopt.runtime.cgroup_v1`). Where neither can be used — a container that does
not delegate them, a read-only ``/sys/fs/cgroup`` — :func:`detect` says why not, and the profiler
samples the process tree with psutil (:mod:`peakopt.runtime.tree`) instead.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from peakopt.runtime.cgroup_v1 import CgroupV1, detect_v1, file_cache, own_folders

if TYPE_CHECKING:
    from peakopt.models import Machine  # only for annotations: `run --help` imports no pydantic

#: What the kernel must delegate for a measured cgroup.
CONTROLLERS = ("memory", "cpu")

_counter = itertools.count()


@dataclass(frozen=True)
class Detected:
    """Which cgroup accounting can be used here, and where to create cgroups; or why none.

    Attributes
    ----------
    parent
        The folder to create cgroups in (v2), or the memory hierarchy's one (v1); None: no cgroups.
    reason
        ``cgroup v2``, ``cgroup v1``, or why neither can be used.
    v1
        With cgroup v1, the parent folders by controller (``memory``, ``cpuacct``).
    """

    parent: Path | None
    reason: str
    v1: Mapping[str, Path] = field(default_factory=dict)

    def group(self) -> Cgroup | CgroupV1 | None:
        """A new (not yet created) cgroup for one command, or None without cgroups."""
        if self.parent is None:
            return None
        return CgroupV1(dict(self.v1)) if self.v1 else Cgroup(self.parent)


def own_cgroup(proc_cgroup: str) -> str | None:
    """The cgroup v2 path of a process from ``/proc/PID/cgroup`` text (the ``0::PATH`` line)."""
    for line in proc_cgroup.splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            return path
    return None


def v2_mount(mountinfo: str) -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, from ``/proc/self/mountinfo`` text."""
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " in line and line.split(" - ", 1)[1].split()[0] == "cgroup2":
            return Path(fields[4])
    return None


def detect(proc: Path = Path("/proc/self")) -> Detected:
    """Whether this process can create measured cgroups, v2 or else v1, and where (see the module)."""
    found = detect_v2(proc)
    if found.parent is not None:
        return found
    folders, why = detect_v1(proc)
    if folders:
        return Detected(folders["memory"], "cgroup v1", folders)
    return Detected(None, f"{found.reason}; {why}")


def detect_v2(proc: Path = Path("/proc/self")) -> Detected:
    """Whether this process can create measured cgroup v2 children, and where."""
    try:
        mount = v2_mount((proc / "mountinfo").read_text())
        path = own_cgroup((proc / "cgroup").read_text())
    except OSError as exc:
        return Detected(None, f"cannot read {exc.filename} ({exc.strerror})")
    if mount is None or path is None:
        return Detected(None, "no cgroup v2 hierarchy is mounted")
    parent = mount / path.lstrip("/")
    try:
        available = (parent / "cgroup.controllers").read_text().split()
        delegated = (parent / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return Detected(None, f"cannot read the cgroup {parent} ({exc.strerror})")
    missing = [c for c in CONTROLLERS if c not in available or c not in delegated]
    if missing:
        return Detected(None, f"the cgroup v2 hierarchy at {parent} does not delegate {', '.join(missing)}")
    if not os.access(parent, os.W_OK):
        return Detected(None, f"the cgroup {parent} is not writable")
    return Detected(parent, "cgroup v2")


#: A limit at or above this many bytes is no limit (the kernel shows "unlimited" as about 2**63).
UNLIMITED = 2**62


def memory_limit(proc: Path = Path("/proc/self")) -> int | None:
    """The memory limit on this process's cgroup in bytes, its ancestors' included; None without one.

    cgroup v2: the lowest ``memory.max`` from the process's cgroup up to the hierarchy's root;
    v1: ``memory.stat``'s ``hierarchical_memory_limit`` of its memory cgroup (the ancestors'
    included), or its ``memory.limit_in_bytes``. Only reading is needed, no delegation.
    """
    try:
        mountinfo, cgroup = (proc / "mountinfo").read_text(), (proc / "cgroup").read_text()
    except OSError:
        return None
    limits: list[int] = []
    mount, path = v2_mount(mountinfo), own_cgroup(cgroup)
    if mount is not None and path is not None:
        folder = mount / path.lstrip("/")
        for level in (folder, *folder.parents):
            limits += _read_limit(level / "memory.max")
            if level == mount:
                break
    folders, _ = own_folders(mountinfo, cgroup, ("memory",))
    if "memory" in folders:
        stat = _read_limit(folders["memory"] / "memory.stat", key="hierarchical_memory_limit")
        limits += stat or _read_limit(folders["memory"] / "memory.limit_in_bytes")
    found = [limit for limit in limits if limit < UNLIMITED]
    return min(found) if found else None


def within_limit(machine: Machine, limit: int | None) -> tuple[Machine, str]:
    """The machine with its ``memory_mb`` lowered to a cgroup memory ``limit`` (bytes), and what was done.

    A machine whose declared memory is at most the limit, or a limit of None, is kept as it is.
    """
    declared = machine.capacity.get("memory_mb")
    if limit is None:
        return machine, "no cgroup memory limit here: memory_mb as declared"
    mib = round(limit / 2**20, 3)
    if declared is not None and declared <= mib:
        return machine, f"memory_mb {declared:g} MiB as declared, within the cgroup limit of {mib:g} MiB"
    lowered = type(machine).model_validate(
        {**machine.model_dump(), "capacity": {**machine.capacity, "memory_mb": mib}}
    )
    was = f"declared {declared:g} MiB" if declared is not None else "not declared"
    return lowered, f"memory_mb {mib:g} MiB: this process's cgroup memory limit ({was})"


def _read_limit(path: Path, key: str = "") -> list[int]:
    """The number in a limit file (``max``: none), or on its ``key`` line; empty when unreadable or absent."""
    try:
        text = path.read_text()
    except OSError:
        return []
    if key:
        text = next((line.split()[1] for line in text.splitlines() if line.startswith(key + " ")), "")
    text = text.strip()
    return [int(text)] if text.isdigit() else []


def read_usage_usec(cpu_stat: str) -> int:
    """``usage_usec`` of a ``cpu.stat`` file's text (microseconds of CPU time)."""
    for line in cpu_stat.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value)
    raise ValueError("cpu.stat has no usage_usec line")


class Cgroup:
    """A child cgroup v2 for one measured command: created on entry, removed on exit.

    Parameters
    ----------
    parent
        The folder :func:`detect` found.
    """

    accounting = "cgroup v2"

    def __init__(self, parent: Path) -> None:
        self.path = parent / f"peakopt-{os.getpid()}-{next(_counter)}"

    def __enter__(self) -> Cgroup:
        self.path.mkdir()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):  # still busy: the kernel frees it when its last process ends
            self.path.rmdir()

    def join(self) -> None:
        """Move the calling process into this cgroup (run in the child between fork and exec)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def memory_current(self) -> int:
        """Bytes charged to the cgroup now, less the page cache of files (as v1's, :mod:`.cgroup_v1`)."""
        current = int((self.path / "memory.current").read_text())
        return max(0, current - file_cache((self.path / "memory.stat").read_text(), prefix=""))

    def memory_peak(self) -> int | None:
        """The highest ``memory.current`` so far (None before kernel 5.19, which has no ``memory.peak``)."""
        try:
            return int((self.path / "memory.peak").read_text())
        except FileNotFoundError:
            return None

    def usage_usec(self) -> int:
        """CPU microseconds used by the cgroup's processes so far."""
        return read_usage_usec((self.path / "cpu.stat").read_text())
