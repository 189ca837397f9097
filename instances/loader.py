"""One entry point that reads any supported input into a :class:`Suite`."""

from __future__ import annotations

from pathlib import Path

from peakopt.instances.errors import InputError
from peakopt.instances.names import CPU_CHOICES, FORMATS
from peakopt.instances.native import parse_json, parse_jsonl
from peakopt.instances.paths import BUNDLED_PREFIX, EXTENSIONS, bundled, read_text, resolve
from peakopt.instances.psplib_format import parse_rcp, parse_sm
from peakopt.models import Suite

__all__ = ["BUNDLED_PREFIX", "FORMATS", "bundled", "detect_format", "load", "parse_text", "resolve"]


def detect_format(path: Path, text: str) -> str:
    """The format of a file, from its extension or else its first characters."""
    by_extension = EXTENSIONS.get(path.suffix.lower())
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


def load(
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 (the public keyword, as the CLI's --format)
    cpu: str = "peak",
    keep_dummies: bool = False,
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
    resolved = resolve(path)
    return parse_text(read_text(resolved), resolved, format=format, cpu=cpu, keep_dummies=keep_dummies)


def parse_text(
    text: str,
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 (as load's)
    cpu: str = "peak",
    keep_dummies: bool = False,
) -> Suite:
    """Build a suite from the text of an input file (see :func:`load`).

    ``path`` names the file in errors and gives the format by its extension
    when ``format`` is None; it is never read again.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    if cpu not in CPU_CHOICES:
        raise ValueError(f"cpu must be one of {CPU_CHOICES}, got {cpu!r}")
    source = Path(path)
    kind = format or detect_format(source, text)
    if kind == "sm":
        return parse_sm(text, source, keep_dummies=keep_dummies)
    if kind == "rcp":
        return parse_rcp(text, source, keep_dummies=keep_dummies)
    if kind == "jsonl":
        return parse_jsonl(text, source, cpu=cpu)
    return parse_json(text, source, cpu=cpu, rasc=kind == "rasc")
