"""Lock files that leave nothing behind: an ``flock`` on a file removed as the lock is let go.

Removing a lock file is only safe with a check after locking: a process that opened the
file just before its holder removed it then holds a lock on a file no longer in the folder,
and must open the new one (:func:`take` loops until the file it locked is the one named).
The holder writes its process id into the file, so that a refusal can name it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def take(path: Path, *, wait: bool) -> int | None:
    """Lock ``path`` (created if needed) and return its descriptor.

    Parameters
    ----------
    path
        The lock file.
    wait
        Wait for another holder to let go; otherwise return None at once when it is held.

    Returns
    -------
    int or None
        The locked descriptor, to hand to :func:`release`; None when held elsewhere and not ``wait``.

    Raises
    ------
    OSError
        When the file cannot be opened or created (the caller names the output).
    """
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            return None
        if _same_file(handle, path):
            os.ftruncate(handle, 0)
            os.write(handle, f"{os.getpid()}\n".encode())
            return handle
        os.close(handle)


def release(path: Path, handle: int) -> None:
    """Let go of a lock :func:`take` returned; the file is removed first (see the module doc)."""
    path.unlink(missing_ok=True)
    os.close(handle)


def holder(path: Path) -> str:
    """`` (pid N)`` when the lock file names its holder, else empty."""
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


@contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the lock on ``path`` for the block, waiting for another holder first."""
    handle = take(path, wait=True)
    assert handle is not None  # a waiting take always returns a descriptor
    try:
        yield
    finally:
        release(path, handle)


def _same_file(handle: int, path: Path) -> bool:
    try:
        return os.fstat(handle).st_ino == path.stat().st_ino
    except FileNotFoundError:
        return False
