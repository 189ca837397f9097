"""peakopt's own JSON formats: a workflow, a suite, JSON Lines of workflows."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from peakopt.instances.documents import Document, decode_all
from peakopt.instances.errors import InputError, from_validation
from peakopt.instances.peakbench import from_context
from peakopt.models import Machine, Suite, Workflow


def parse_document(
    data: Any, source: str | Path, *, cpu: str = "peak", prefix: str = "", rasc: bool = False
) -> Suite:
    """Build a suite from one decoded JSON document.

    A document is a suite (``workflows``/``machines``), a workflow
    (``tasks``), a PeakBench context (``steps``; always, with ``rasc=True``)
    or a list of workflows.

    Raises
    ------
    InputError
        When the document has another shape or breaks a model rule.
    """
    if isinstance(data, list):
        data = {"workflows": data}
    run = run_record(data)
    if run:
        raise InputError(source, prefix, f"is {run}, not a workflow or a suite: score it with peakopt score")
    model: type[Suite] | type[Workflow]
    if isinstance(data, dict) and "tasks" in data:
        model = Workflow
    elif isinstance(data, dict) and ("steps" in data or rasc):
        return from_context(data, source, cpu=cpu, prefix=prefix)
    elif isinstance(data, dict) and ("workflows" in data or "machines" in data):
        model = Suite
    else:
        raise InputError(
            source,
            prefix,
            f"JSON of the wrong shape ({type(data).__name__}): expected a workflow (with 'tasks'), "
            "a suite (with 'workflows'), a list of workflows or a PeakBench context (with 'steps')",
        )
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        raise from_validation(source, exc, data, prefix) from None
    return parsed if isinstance(parsed, Suite) else Suite(workflows=(parsed,))


def run_record(data: Any) -> str | None:
    """What run record a decoded document is — a peakopt trace, an OpenTelemetry export — or None.

    ``peakopt score`` reads them (:mod:`peakopt.runtime.hindsight`); elsewhere a trace would
    pass for a PeakBench context (it has ``steps``) and fail on a field, far from the point.
    """
    if isinstance(data, dict) and data.get("format") == "peakopt-trace":
        return "a peakopt trace (peakopt run -o)"
    if isinstance(data, dict) and "resourceSpans" in data:
        return "an OpenTelemetry trace export (OTLP JSON)"
    return None


def parse_json(text: str, source: str | Path, *, cpu: str = "peak", rasc: bool = False) -> Suite:
    """Parse a JSON file's text: one document, or several one after another (read in turn)."""
    return _parse_documents(decode_all(text, source), source, cpu=cpu, rasc=rasc, by_line=False)


def parse_jsonl(text: str, source: str | Path, *, cpu: str = "peak", rasc: bool = False) -> Suite:
    """Parse JSON Lines: one document (usually a workflow) per line, each named by its line."""
    return _parse_documents(decode_all(text, source, by_line=True), source, cpu=cpu, rasc=rasc, by_line=True)


def _parse_documents(
    found: list[Document], source: str | Path, *, cpu: str, rasc: bool, by_line: bool
) -> Suite:
    several = by_line or len(found) > 1
    parts = [
        parse_document(d.data, source, cpu=cpu, prefix=f"line {d.line}" if several else "", rasc=rasc)
        for d in found
    ]
    return parts[0] if len(parts) == 1 else merge(parts, source)


def merge(suites: Iterable[Suite], source: str | Path = "<inputs>") -> Suite:
    """Concatenate suites; machines of the same name must have the same capacities.

    Raises
    ------
    InputError
        On a workflow id used twice or a machine name with two capacities.
    """
    return merge_files((source, suite) for suite in suites)


def merge_files(inputs: Iterable[tuple[str | Path, Suite]]) -> Suite:
    """Concatenate the suites of several files (see :func:`merge`); errors name both files.

    Raises
    ------
    InputError
        On a workflow id used twice or a machine name with two capacities.
    """
    machines: dict[str, tuple[Machine, str]] = {}
    workflows: dict[str, tuple[Workflow, str]] = {}
    for source, suite in inputs:
        for machine in suite.machines:
            known, where = machines.setdefault(machine.name, (machine, str(source)))
            if known.capacity != machine.capacity:
                raise InputError(
                    source,
                    f"machine {machine.name!r}",
                    "defined twice with different capacities" + _also(where, source),
                )
        for workflow in suite.workflows:
            if workflow.id in workflows:
                raise InputError(
                    source,
                    f"workflow {workflow.id!r}",
                    "duplicate workflow id" + _also(workflows[workflow.id][1], source),
                )
            workflows[workflow.id] = (workflow, str(source))
    return Suite(
        machines=tuple(m for m, _ in machines.values()), workflows=tuple(w for w, _ in workflows.values())
    )


def _also(first: str, source: str | Path) -> str:
    return "" if first == str(source) else f" (also in {first})"


def dump(model: Workflow | Suite | Machine) -> dict[str, Any]:
    """JSON-ready dict of a model, without fields left at their defaults."""
    return model.model_dump(mode="json", exclude_defaults=True)


def suite_document(suite: Suite) -> dict[str, Any]:
    """The suite as one JSON document; a lone workflow with no machine stays a workflow."""
    if len(suite.workflows) == 1 and not suite.machines and not suite.meta:
        return dump(suite.workflows[0])
    return dump(suite)


def suite_json(suite: Suite) -> str:
    """Native JSON text of a suite (see :func:`suite_document`)."""
    return pretty_json(suite_document(suite))


def pretty_json(document: Any) -> str:
    """Indented JSON text ending in a newline."""
    return json.dumps(document, indent=2) + "\n"


def to_jsonl(records: Iterable[dict[str, Any]]) -> str:
    """JSON Lines text: one compact document per line."""
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash never leaves a half-written file.

    See :func:`replacing`: the text goes to a file beside ``path``, which
    then replaces it in one step.
    """
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A new file beside ``path`` that replaces it, in one atomic step, when the block succeeds.

    Until then ``path`` is untouched; when the block raises (an error, Ctrl-C),
    the new file is removed. The new file has ``path``'s suffix (so writers
    that go by it pick the format), its permissions when it exists (else
    those a plain ``open`` gives), and is flushed to disk before the
    replacement. A symbolic link is followed: the file it points to is
    replaced and the link stays.
    """
    target = Path(os.path.realpath(path))
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        # mkstemp makes the file private (0600): give it the old file's mode, or a plain open()'s
        temp.chmod(file_mode(target))
        with temp.open("rb") as written:
            os.fsync(written.fileno())
        temp.replace(target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def file_mode(target: Path) -> int:
    """The permission bits ``target`` has, or those a new file gets under the umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
