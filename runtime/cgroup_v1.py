"""cgroup v1 accounting: a fresh child cgroup per measured command in the memory and cpuacct hierarchies.

On a cgroup v1 machine (many Docker hosts, this project's CI) each controller has a hierarchy of
its own, mounted as ``cgroup`` with the controller's name among its super options (``memory``;
``cpuacct``, often co-mounted as ``cpu,cpuacct``), and ``/proc/self/cgroup`` says where the
process sits in each (``N:memory:/path``). Where both of the process's own cgroups are writable,
a command runs in a child cgroup of each: every process it starts stays in them, and the kernel
counts what they use.

What is read:

- **peak**: ``memory.max_usage_in_bytes``, the exact high-water mark of all memory charged to
  the cgroup. It counts page cache too (a file the command writes is charged to it until the
  kernel reclaims it), so it is an upper bound of what the command held.
- **memory over time**: ``memory.usage_in_bytes`` less the page cache of files
  (``total_active_file`` + ``total_inactive_file`` of ``memory.stat``): what the kernel cannot
  simply drop under pressure — anonymous memory (``rss``, transparent huge pages included),
  shared memory and tmpfs files, kernel memory — which is what an out-of-memory kill is about,
  and what psutil's resident memory shows.
- **CPU**: ``cpuacct.usage``, nanoseconds of CPU time of every process that was in the cgroup.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import time
from pathlib import Path

#: The v1 controllers a measured command needs, by what they count.
CONTROLLERS = ("memory", "cpuacct")

_counter = itertools.count()


def v1_mounts(mountinfo: str) -> dict[str, tuple[Path, str]]:
    """Per v1 controller, its hierarchy's mount point and the root it shows, from ``mountinfo`` text."""
    found: dict[str, tuple[Path, str]] = {}
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(rest) < 3 or rest[0] != "cgroup":
            continue
        for option in rest[2].split(","):
            found.setdefault(option, (Path(fields[4]), fields[3]))
    return found


def v1_paths(proc_cgroup: str) -> dict[str, str]:
    """Per v1 controller, the process's cgroup path, from ``/proc/PID/cgroup`` text (``N:ctl,ctl:/path``)."""
    found = {}
    for line in proc_cgroup.splitlines():
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        for controller in controllers.split(","):
            if controller:
                found[controller] = path
    return found


def own_folders(
    mountinfo: str, proc_cgroup: str, controllers: tuple[str, ...] = CONTROLLERS
) -> tuple[dict[str, Path], str]:
    """The folders of the process's own cgroups of ``controllers``, or what is missing (or "")."""
    mounts, paths = v1_mounts(mountinfo), v1_paths(proc_cgroup)
    folders = {}
    for controller in controllers:
        if controller not in mounts or controller not in paths:
            return {}, f"no cgroup v1 {controller} hierarchy is mounted"
        mount, root = mounts[controller]
        path = paths[controller]
        inside = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
        if inside.startswith(".."):  # a hierarchy mounted from below the process's cgroup
            return {}, f"the cgroup v1 {controller} cgroup {path} is not under its mount {mount}"
        folders[controller] = mount / inside if inside not in ("", ".") else mount
    return folders, ""


def detect_v1(proc: Path = Path("/proc/self")) -> tuple[dict[str, Path], str]:
    """The parent folders to create measured cgroups in (by controller), or empty with the reason why not."""
    try:
        folders, why = own_folders((proc / "mountinfo").read_text(), (proc / "cgroup").read_text())
    except OSError as exc:
        return {}, f"cannot read {exc.filename} ({exc.strerror})"
    if why:
        return {}, why
    needs = {"memory": "memory.max_usage_in_bytes", "cpuacct": "cpuacct.usage"}
    for controller, folder in folders.items():
        if not (folder / needs[controller]).is_file():
            return {}, f"the cgroup v1 {controller} cgroup {folder} has no {needs[controller]}"
        if not os.access(folder, os.W_OK):
            return {}, f"the cgroup v1 {controller} cgroup {folder} is not writable"
    return folders, ""


def file_cache(memory_stat: str, prefix: str = "total_") -> int:
    """Bytes of page cache of files in a ``memory.stat`` text: ``active_file`` + ``inactive_file``.

    v1 names them ``total_...`` for the cgroup and its children, v2 (``prefix=""``) without.
    Shared memory and tmpfs files are on the anonymous lists: they stay counted.
    """
    stat = dict(line.split(" ", 1) for line in memory_stat.splitlines() if " " in line)
    return sum(int(stat.get(f"{prefix}{key}", "0")) for key in ("active_file", "inactive_file"))


def remove_cgroup(folder: Path, *, attempts: int = 50) -> None:
    """Move the processes left in a v1 cgroup to its parent and remove it (retried while busy)."""
    for _ in range(attempts):
        with contextlib.suppress(OSError):  # gone already, or being removed
            for pid in (folder / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):  # it ended meanwhile
                    (folder.parent / "cgroup.procs").write_text(pid)
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
            time.sleep(0.02)  # a process is still leaving (an exiting one cannot be moved)


class CgroupV1:
    """A child cgroup in the memory and cpuacct hierarchies for one measured command (created on entry).

    On exit, the processes still in it (descendants that outlived the command: not measured any
    more) move back to the parent cgroups, and the cgroups are removed.

    Parameters
    ----------
    parents
        The folders :func:`detect_v1` found, by controller (one folder when they are co-mounted).
    """

    accounting = "cgroup v1"

    def __init__(self, parents: dict[str, Path]) -> None:
        name = f"peakopt-{os.getpid()}-{next(_counter)}"
        self.memory, self.cpuacct = parents["memory"] / name, parents["cpuacct"] / name
        self.folders = list(dict.fromkeys((self.memory, self.cpuacct)))  # once when co-mounted

    def __enter__(self) -> CgroupV1:
        made: list[Path] = []
        try:
            for folder in self.folders:
                folder.mkdir()
                made.append(folder)
        except BaseException:
            for folder in made:
                folder.rmdir()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def join(self) -> None:
        """Move the calling process into the cgroups (run in the child between fork and exec)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> list[int]:
        """The processes in the cgroups now."""
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def remove(self) -> None:
        """Move the processes left to the parent cgroups and remove the cgroups."""
        for folder in self.folders:
            remove_cgroup(folder)

    def memory_current(self) -> int:
        """Bytes charged to the cgroup now, less the page cache of files (see the module docstring)."""
        usage = int((self.memory / "memory.usage_in_bytes").read_text())
        return max(0, usage - file_cache((self.memory / "memory.stat").read_text()))

    def memory_peak(self) -> int:
        """The exact high-water mark of all memory charged to the cgroup, page cache included."""
        return int((self.memory / "memory.max_usage_in_bytes").read_text())

    def usage_usec(self) -> int:
        """CPU microseconds used by the cgroup's processes so far."""
        return int((self.cpuacct / "cpuacct.usage").read_text()) // 1000
