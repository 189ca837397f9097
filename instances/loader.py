"""One entry point that reads any supported input into a :class:`Suite`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from peakopt.instances.errors import InputError
from peakopt.instances.native import parse_json, parse_jsonl
from peakopt.instances.peakbench import CPU_CHOICES
from peakopt.instances.psplib_format import read_rcp, read_sm
from peakopt.models import Suite

FORMATS = ("json", "jsonl", "sm", "rcp", "rasc")
BUNDLED_PREFIX = "bundled:"
_EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".sm": "sm", ".rcp": "rcp"}


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


def detect_format(path: Path, text: str) -> str:
    """The format of a file, from its extension or else its first characters."""
    by_extension = _EXTENSIONS.get(path.suffix.lower())
    if by_extension:
        return by_extension
    head = text.lstrip()[:200]
    if head.startswith(("{", "[")):
        return "json"
    if head.startswith("*") or "PRECEDENCE RELATIONS" in text:
        return "sm"
    if head[:1].isdigit():
        return "rcp"
    raise InputError(path, "", "unknown format; name it with --format (" + "|".join(FORMATS) + ")")


def _read_text(path: Path) -> str:
    if not path.exists():
        raise InputError(path, "", "no such file")
    if path.is_dir():
        raise InputError(path, "", "is a directory, expected a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, "", f"cannot be read ({exc.strerror})") from None
    if not data.strip():
        raise InputError(path, "", "file is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, "", f"not UTF-8 text (byte {exc.start}); is it a binary file?") from None


def load(
    path: str | Path, *, format: str | None = None, cpu: str = "peak", keep_dummies: bool = False
) -> Suite:
    """Read a workflow, suite, JSON Lines, PSPLIB, Patterson or PeakBench file.

    Parameters
    ----------
    path
        The file, or ``bundled:NAME`` for an input shipped with peakopt.
    format
        One of :data:`FORMATS`; detected from the extension or content if None.
    cpu
        For PeakBench contexts: ``peak`` or ``avg`` CPU becomes the demand.
    keep_dummies
        For PSPLIB/Patterson: keep the dummy source and sink jobs.

    Returns
    -------
    Suite
        Every input becomes a suite; a lone workflow has no machine.

    Raises
    ------
    InputError
        With the file, the item and the rule, for anything unusable.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    if cpu not in CPU_CHOICES:
        raise ValueError(f"cpu must be one of {CPU_CHOICES}, got {cpu!r}")
    resolved = resolve(path)
    text = _read_text(resolved)
    kind = format or detect_format(resolved, text)
    if kind == "sm":
        return read_sm(resolved, keep_dummies=keep_dummies)
    if kind == "rcp":
        return read_rcp(resolved, keep_dummies=keep_dummies)
    if kind == "jsonl":
        return parse_jsonl(text, resolved, cpu=cpu)
    return parse_json(text, resolved, cpu=cpu, rasc=kind == "rasc")
