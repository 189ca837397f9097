"""Write suites in peakopt's formats and as PeakBench contexts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from peakopt.instances.errors import InputError

if TYPE_CHECKING:
    from peakopt.models import Suite

WRITE_FORMATS = ("json", "jsonl", "rasc")


def render(suite: Suite, to: str, target: str | Path = "<output>") -> str:
    """Text of ``suite`` in format ``to`` (one of :data:`WRITE_FORMATS`).

    ``json`` writes the suite (a lone workflow without machines stays a
    workflow); ``jsonl`` one workflow per line; ``rasc`` one PeakBench
    context per workflow × machine, as one document or JSON Lines.

    Raises
    ------
    InputError
        When the format cannot hold the suite (machines in ``jsonl``, none
        in ``rasc``).
    """
    # here, not at the top: the package imports this module eagerly, and its --help needs no pydantic
    from peakopt.instances.native import dump, pretty_json, suite_json, to_jsonl
    from peakopt.instances.peakbench import to_context

    if to == "json":
        return suite_json(suite)
    if to == "jsonl":
        if suite.machines:
            raise InputError(
                target, "machines", "JSON Lines holds workflows only; write json to keep the machines"
            )
        return to_jsonl(dump(w) for w in suite.workflows)
    if to == "rasc":
        if not suite.machines:
            raise InputError(target, "machines", "a PeakBench context needs a machine; the input has none")
        contexts = [to_context(w, m) for w in suite.workflows for m in suite.machines]
        if len(contexts) == 1:
            return pretty_json(contexts[0])
        return to_jsonl(contexts)
    raise ValueError(f"to must be one of {WRITE_FORMATS}, got {to!r}")


def save(suite: Suite, path: str | Path, *, to: str | None = None) -> None:
    """Write ``suite`` to ``path`` atomically; the format defaults from the extension."""
    from peakopt.instances.native import write_atomic

    target = Path(path)
    kind = to or ("jsonl" if target.suffix.lower() in (".jsonl", ".ndjson") else "json")
    write_atomic(target, render(suite, kind, target))
