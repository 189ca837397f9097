"""``peakopt schedule``: run heuristics and write their schedules as JSON Lines."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from peakopt.cli.common import input_options, unconstrained, warn
from peakopt.instances import InputError, load
from peakopt.instances.machine_files import load_machines
from peakopt.instances.native import to_jsonl
from peakopt.instances.records import schedule_record, write_jsonl
from peakopt.models import Machine, Schedule, Suite
from peakopt.oracle import Score, evaluate
from peakopt.solver.heuristics import METHOD_PATTERNS, Method, MethodError, method_names, parse_method
from peakopt.solver.heuristics.methods import __doc__ as GRAMMAR

#: Above this many schedules the table shows one row per machine × method.
DETAIL_ROWS = 30


def _list_methods(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo("\n".join([*method_names(), *METHOD_PATTERNS]))
    ctx.exit()


def parse_methods(values: tuple[str, ...]) -> list[Method]:
    """Methods from ``--method`` values (repeated or comma-separated); unknown names are usage errors."""
    names = [n.strip() for value in values for n in value.split(",") if n.strip()]
    methods = []
    for name in dict.fromkeys(names):
        try:
            methods.append(parse_method(name))
        except MethodError as exc:
            raise click.BadParameter(str(exc), param_hint="'--method'") from None
    return methods


def pick_machines(suite: Suite, values: tuple[str, ...], known: dict[str, Machine]) -> list[Machine | None]:
    """The machines for ``suite``'s workflows: ``--machine`` values, or else the suite's own.

    A value names a machine of this input (or, failing that, of any input in
    ``known``) or is a file of machines.
    """
    if not values:
        return list(suite.machines) or [None]
    own = {m.name: m for m in suite.machines}
    picked: dict[str, Machine] = {}
    for value in values:
        if value in own or value in known:
            picked[value] = own.get(value) or known[value]
        elif value.startswith("bundled:") or Path(value).is_file():
            picked.update((m.name, m) for m in load_machines(value))
        else:
            names = ", ".join(sorted(known)) or "none"
            raise click.BadParameter(
                f"{value!r} is neither a machine of the inputs (they define: {names}) nor a file",
                param_hint="'--machine'",
            )
    return list(picked.values())


def read_each(paths: tuple[str, ...], fmt: str | None, cpu: str, keep_dummies: bool) -> list[Suite]:
    """Each input as its own suite, so that every workflow keeps its own file's machines.

    PSPLIB files all call their machine ``psplib``, with different capacities.

    Raises
    ------
    InputError
        When two inputs hold a workflow of the same id.
    """
    suites = [load(p, format=fmt, cpu=cpu, keep_dummies=keep_dummies) for p in paths]
    seen: set[str] = set()
    for path, suite in zip(paths, suites, strict=True):
        for workflow in suite.workflows:
            if workflow.id in seen:
                raise InputError(path, f"workflow {workflow.id!r}", "duplicate workflow id across the inputs")
            seen.add(workflow.id)
    return suites


def plan_inputs(
    suites: list[Suite], machine_values: tuple[str, ...], methods: list[Method]
) -> list[tuple[Suite, list[Machine | None]]]:
    """Each input with the machines to run its workflows on; warns about unconstrained resources.

    Raises
    ------
    click.UsageError
        A resource-aware method and an input without a machine.
    """
    known = {m.name: m for suite in suites for m in suite.machines}
    plans = [(suite, pick_machines(suite, machine_values, known)) for suite in suites]
    notes: dict[str, None] = {}
    for suite, machines in plans:
        chosen = tuple(m for m in machines if m is not None)
        notes.update(dict.fromkeys(unconstrained(Suite(machines=chosen, workflows=suite.workflows))))
    for note in notes:
        warn(note)
    aware = [m.name for m in methods if m.resource_aware]
    if aware and any(None in machines for _, machines in plans):
        raise click.UsageError(
            f"method {aware[0]!r} is resource-aware and an input defines no machine; pass --machine FILE|NAME"
        )
    return plans


#: Stands in for "no machine" when the oracle only checks dependencies and makespan.
LIMITLESS = Machine(name="limitless", capacity={})


def _cells(schedule: Schedule, score: Score) -> tuple[str, str, str]:
    if schedule.machine is None:
        return f"{score.makespan:.6g}", "-", "-" if score.valid else "invalid"
    safe = "yes" if score.safe else ("invalid" if not score.valid else "no")
    return f"{score.makespan:.6g}", f"{score.cva:.4g}", safe


def _detail(rows: list[tuple[Schedule, Score]]) -> Table:
    table = Table(title="peakopt schedule", title_justify="left")
    for column in ("workflow", "machine", "method", "makespan", "cva", "safe"):
        table.add_column(column, justify="right" if column in ("makespan", "cva") else "left")
    for schedule, score in rows:
        table.add_row(
            schedule.workflow, schedule.machine or "-", schedule.source or "", *_cells(schedule, score)
        )
    return table


def _summary(rows: list[tuple[Schedule, Score]]) -> Table:
    table = Table(title="peakopt schedule (means over workflows)", title_justify="left")
    for column in ("machine", "method", "schedules", "makespan", "cva", "safe"):
        table.add_column(column, justify="left" if column in ("machine", "method") else "right")
    groups: dict[tuple[str, str], list[Score]] = defaultdict(list)
    for schedule, score in rows:
        groups[(schedule.machine or "-", schedule.source or "")].append(score)
    for (machine, method), scores in groups.items():
        count = len(scores)
        span = sum(s.makespan for s in scores) / count
        if machine == "-":
            table.add_row(machine, method, str(count), f"{span:.6g}", "-", "-")
        else:
            cva = sum(s.cva for s in scores) / count
            table.add_row(
                machine,
                method,
                str(count),
                f"{span:.6g}",
                f"{cva:.4g}",
                f"{sum(s.safe for s in scores)}/{count}",
            )
    return table


def print_table(rows: list[tuple[Schedule, Score]]) -> None:
    """Makespan, cva and safety per schedule (or per machine × method when many) on stderr."""
    Console(file=sys.stderr).print(_detail(rows) if len(rows) <= DETAIL_ROWS else _summary(rows))


def _epilog() -> str:
    lines = (GRAMMAR or "").split("::", 1)[-1].strip("\n").splitlines()
    return "Method names:\n\n\b\n" + "\n".join(line.rstrip() for line in lines if line.strip())


@click.command(epilog=_epilog())
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-m",
    "--method",
    "method_values",
    multiple=True,
    default=("best:fast",),
    show_default=True,
    help="Heuristic(s): NAME[,NAME...], repeatable; see below and --list.",
)
@click.option(
    "--machine",
    "machine_values",
    multiple=True,
    help="A machine of the inputs by name, or a file of machines; repeatable.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the random rule, sampling and plug-ins."
)
@click.option("-o", "--output", help="Write the schedules (JSON Lines) to this file, atomically.")
@click.option("--json", "as_json", is_flag=True, help="Print the schedules (JSON Lines) on stdout.")
@click.option(
    "--list",
    "list_methods",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_list_methods,
    help="List the built-in methods and exit.",
)
@input_options
def schedule(
    paths: tuple[str, ...],
    method_values: tuple[str, ...],
    machine_values: tuple[str, ...],
    seed: int,
    output: str | None,
    as_json: bool,
    fmt: str | None,
    cpu: str,
    keep_dummies: bool,
) -> None:
    """Schedule every workflow × machine × method with heuristics.

    Writes one JSON Lines record {"workflow", "machine", "source", "starts"}
    per schedule (what `peakopt score` reads) and prints makespan, cva and
    safety, as the oracle judges them, on stderr.

    Example: peakopt schedule bundled:refund --method asap,fbi:sgs:parallel:lft --json
    """
    if output and as_json:
        raise click.UsageError("give either -o FILE or --json, not both")
    methods = parse_methods(method_values)
    plans = plan_inputs(read_each(paths, fmt, cpu, keep_dummies), machine_values, methods)
    rows: list[tuple[Schedule, Score]] = []
    for suite, machines in plans:
        for workflow in suite.workflows:
            for machine in machines:
                for method in methods:
                    result = method.schedule(workflow, machine, seed=seed)
                    rows.append((result, evaluate(workflow, machine or LIMITLESS, result)))
    records = [schedule_record(s) for s, _ in rows]
    if output:
        write_jsonl(output, records)
    elif as_json:
        click.echo(to_jsonl(records), nl=False)
    print_table(rows)
