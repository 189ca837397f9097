"""Commands about inputs: validate, convert, schema."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from peakopt.cli.common import input_files, input_options, read_inputs, summary, unconstrained, warn
from peakopt.cli.messages import quiet_option, wrote
from peakopt.cli.outputs import REPLACES, claim
from peakopt.instances import WRITE_FORMATS, InputError, render

if TYPE_CHECKING:
    from peakopt.models import Suite

#: Each document's name -> its model's name in :mod:`peakopt.models` (a name: --help imports no model).
SCHEMAS: dict[str, str] = {
    "workflow": "Workflow",
    "suite": "Suite",
    "task": "Task",
    "segment": "Segment",
    "machine": "Machine",
    "schedule": "Schedule",
    "reference": "SolveResult",
}


@click.command()
@click.argument("paths", nargs=-1, required=True)
@input_options
@click.option("--json", "as_json", is_flag=True, help="Print one record per file on stdout (JSON Lines).")
@click.option(
    "--stats",
    is_flag=True,
    help="Also solve every workflow x machine and print the floor: the share of pairs each trivial "
    "answer (every step at 0, one at a time, ASAP) solves optimally, and the hard split's size.",
)
@quiet_option
def validate(
    paths: tuple[str, ...], fmt: str | None, cpu: str, keep_dummies: bool, as_json: bool, stats: bool
) -> None:
    """Check input files: one line per file, OK with counts or the error.

    A directory means every input file in it (.json, .jsonl, .ndjson, .sm,
    .rcp), in sorted order. Exits 1 when any file is bad. With --stats, each
    good file with machines also gets its floor (a solve of every pair: 10 s
    at most each).

    Example: peakopt validate bundled:refund ../shared/psplib/j30/
    """
    from peakopt.instances import load  # the readers: pydantic and the models, not for --help

    failed = 0
    for given in paths:
        try:
            files = input_files([given])
        except InputError as exc:
            failed += 1
            _report({"path": given, "ok": False, "error": str(exc)}, as_json)
            continue
        for path in files:
            try:
                suite = load(path, format=fmt, cpu=cpu, keep_dummies=keep_dummies)
            except InputError as exc:
                failed += 1
                _report({"path": path, "ok": False, "error": str(exc)}, as_json)
                continue
            notes = unconstrained(suite)
            record = {
                "path": path,
                "ok": True,
                "workflows": len(suite.workflows),
                "tasks": sum(len(w.tasks) for w in suite.workflows),
                "machines": [m.name for m in suite.machines],
                "warnings": notes,
            }
            if stats and suite.machines:
                record["floor"] = _floor(suite)
            _report(record, as_json, summary(suite))
    if failed:
        raise SystemExit(1)


def _floor(suite: Suite) -> dict[str, Any]:
    """The floor of every pair of ``suite``, as ``validate --json`` records it."""
    # here: the solver and the oracle's tables are for --stats only
    from peakopt.campaign.floor import describe, solved_references, suite_floor

    found = suite_floor(suite, solved_references(suite))
    return {
        "pairs": found.pairs,
        "trivial": found.trivial,
        "hard": len(found.hard),
        "answers": {
            line.answer: {"optimal": line.optimal, "safe": line.safe, "efficiency": line.efficiency}
            for line in found.lines
        },
        "lines": describe(found),
    }


def _report(record: dict[str, Any], as_json: bool, counts: str = "") -> None:
    """One file's line: a JSON record on stdout, or OK on stdout / Error on stderr."""
    if as_json:
        click.echo(json.dumps({k: v for k, v in record.items() if k != "floor"} | _floor_record(record)))
    elif not record["ok"]:
        click.echo(f"Error: {record['error']}", err=True)
    else:
        click.echo(f"OK {record['path']}: {counts}")
        for line in record.get("floor", {}).get("lines", []):
            click.echo(f"  {line}")
        for note in record["warnings"]:
            warn(f"{record['path']}: {note}")


def _floor_record(record: dict[str, Any]) -> dict[str, Any]:
    """The floor of a ``--json`` record, without its text lines."""
    if "floor" not in record:
        return {}
    return {"floor": {k: v for k, v in record["floor"].items() if k != "lines"}}


@click.command()
@click.argument("source", metavar="IN")
@click.option("-o", "--output", required=True, metavar="FILE", help=f"File to write. {REPLACES}")
@click.option(
    "--to",
    type=click.Choice(WRITE_FORMATS),
    help="Output format; by default jsonl for .jsonl files, else json.",
)
@input_options
@quiet_option
def convert(source: str, output: str, to: str | None, fmt: str | None, cpu: str, keep_dummies: bool) -> None:
    """Convert an input file to peakopt JSON, JSON Lines or a PeakBench context.

    Example: peakopt convert ../shared/psplib/j30/j301_1.sm -o j301_1.json
    """
    out = claim(output, [source])
    suite = read_inputs([source], fmt, cpu, keep_dummies)
    kind = to or ("jsonl" if output.lower().endswith((".jsonl", ".ndjson")) else "json")
    if out is not None:
        out.write_text(render(suite, kind, output))
    wrote(output, f"{summary(suite)} ({kind})")


@click.command()
@click.argument("name", type=click.Choice(sorted(SCHEMAS)), default="workflow", required=False)
@quiet_option
def schema(name: str) -> None:
    """Print the JSON Schema of a peakopt document (default: workflow).

    Useful as the structured-output schema of an LLM call.

    Example: peakopt schema suite > suite.schema.json
    """
    from peakopt import models

    model = getattr(models, SCHEMAS[name])
    click.echo(json.dumps(model.model_json_schema(), indent=2))
