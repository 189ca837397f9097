"""Where inputs come from: bundled names, directories, pipes, symlinks.

Every reader takes its text from :func:`read_text`, which reads a file
exactly once, so that a pipe or a process substitution (``<(cat x.sm)``,
``/dev/stdin``) works for every format; and every command expands its input
paths with :func:`expand`, so that a directory means the input files in it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from peakopt.instances.errors import InputError

BUNDLED_PREFIX = "bundled:"

#: File name extensions of the input formats; a directory's files with these are its inputs.
EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".sm": "sm", ".rcp": "rcp"}

# PSPLIB's tables of optima and bounds (j30opt.sm, j30hrs.sm, j90lb.sm...) share
# the .sm extension with instances; their column header names parameter and
# instance ("Par Inst", "Paramter Instance") near the top, where an instance
# has its PRECEDENCE RELATIONS section
_TABLE_HEADER = re.compile(r"^\s*Par\w*\s+Inst", re.MULTILINE)
_PSPLIB_MARK = "PRECEDENCE RELATIONS"
_HEAD = 4096


def bundled(name: str) -> Path:
    """Path of a bundled input (``refund``, ``default``...) shipped with peakopt.

    Raises
    ------
    InputError
        When no bundled input has that name.
    """
    data = resources.files("peakopt.instances.data")
    for suffix in (".json", ".jsonl"):
        candidate = data / f"{name}{suffix}"
        if candidate.is_file():
            return Path(str(candidate))
    known = sorted(p.name.split(".")[0] for p in data.iterdir() if p.name.endswith((".json", ".jsonl")))
    raise InputError(
        f"{BUNDLED_PREFIX}{name}", "", f"no bundled input of that name; known: {', '.join(known)}"
    )


def resolve(path: str | Path) -> Path:
    """Turn ``bundled:NAME`` into the bundled file's path; other paths unchanged."""
    text = str(path)
    if text.startswith(BUNDLED_PREFIX):
        return bundled(text.removeprefix(BUNDLED_PREFIX))
    return Path(path)


def _missing(path: Path, exc: OSError) -> InputError:
    """Why ``path`` cannot be opened, in words (a loop is not "no such file")."""
    if exc.errno == errno.ELOOP:
        return InputError(path, "", "is a symlink loop (following its links comes back to them)")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        if path.is_symlink():
            return InputError(path, "", f"is a broken symlink (to {path.readlink()}, which does not exist)")
        return InputError(path, "", "no such file")
    return InputError(path, "", f"cannot be read ({exc.strerror})")


def read_text(path: str | Path) -> str:
    """The text of a file, read exactly once (a pipe can be read only once).

    Raises
    ------
    InputError
        When the file is missing, a directory, a symlink loop, unreadable,
        empty or not UTF-8 text.
    """
    source = resolve(path)
    try:
        if stat.S_ISDIR(source.stat().st_mode):
            raise InputError(source, "", "is a directory, expected a file")
        data = source.read_bytes()
    except OSError as exc:
        raise _missing(source, exc) from None
    if not data.strip():
        raise InputError(source, "", "file is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(source, "", f"not UTF-8 text (byte {exc.start}); is it a binary file?") from None


@dataclass(frozen=True)
class Expanded:
    """Input paths with every directory replaced by its input files.

    Attributes
    ----------
    files
        The paths to read, in order (``bundled:NAME`` kept as given).
    skipped
        Files of those directories left out: PSPLIB result tables (optima,
        bounds), which share the ``.sm`` extension with instances.
    """

    files: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def expand(paths: Iterable[str | Path]) -> Expanded:
    """Replace each directory by its input files (by extension), in sorted order.

    Sorted by name, as the shell sorts ``DIR/*``; hidden files and
    subdirectories are left out. Anything else (a file, a pipe, a missing
    path, ``bundled:NAME``) is kept for the reader to read or refuse.

    Raises
    ------
    InputError
        On a directory that cannot be listed or holds no input file.
    """
    files: list[str] = []
    skipped: list[str] = []
    for path in paths:
        text = str(path)
        if text.startswith(BUNDLED_PREFIX) or not Path(text).is_dir():
            files.append(text)
            continue
        found, tables = _directory(Path(text))
        files.extend(found)
        skipped.extend(tables)
    return Expanded(tuple(files), tuple(skipped))


def _directory(folder: Path) -> tuple[list[str], list[str]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise _missing(folder, exc) from None
    found: list[str] = []
    tables: list[str] = []
    for entry in entries:
        suffix = Path(entry.name).suffix.lower()
        if entry.name.startswith(".") or suffix not in EXTENSIONS or entry.is_dir():
            continue
        if suffix == ".sm" and entry.is_file() and _results_table(Path(entry.path)):
            tables.append(entry.path)
        else:
            found.append(entry.path)
    if not found:
        also = f"; skipped {len(tables)} PSPLIB result table(s)" if tables else ""
        kinds = ", ".join(EXTENSIONS)
        raise InputError(folder, "", f"is a directory without input files ({kinds}){also}")
    return found, tables


def _results_table(path: Path) -> bool:
    """Whether a ``.sm`` file is one of PSPLIB's tables of optima or bounds, not an instance."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD).decode("utf-8", errors="replace")
    except OSError:
        return False  # let the reader say what is wrong with it
    return _PSPLIB_MARK not in head and _TABLE_HEADER.search(head) is not None
