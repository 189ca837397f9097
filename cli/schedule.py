"""``peakopt schedule``: run heuristics and write their schedules as JSON Lines."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import TYPE_CHECKING

import click

from peakopt.cli.common import input_options, soft_as_hard_option
from peakopt.cli.messages import plural, print_tables, quiet_option, wrote
from peakopt.cli.options import method_list, seed_option
from peakopt.cli.outputs import REPLACES, claim
from peakopt.cli.targets import Target, targets

# The heuristics, the oracle and the models are imported by the functions that use them, so that
# `schedule --help` imports no pydantic (nor NumPy).
if TYPE_CHECKING:
    from rich.table import Table

    from peakopt.models import Machine, Schedule
    from peakopt.oracle import Score
    from peakopt.oracle.tables.rows import ScoreRow
    from peakopt.solver.heuristics import Method

#: Above this many schedules the table shows one row per machine × method.
DETAIL_ROWS = 30


def _list_methods(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from peakopt.solver.heuristics import METHOD_PATTERNS, method_names

    click.echo("\n".join([*method_names(), *METHOD_PATTERNS]))
    ctx.exit()


def parse_methods(names: tuple[str, ...]) -> list[Method]:
    """The methods of ``--method``'s names; an unknown one is a usage error."""
    from peakopt.solver.heuristics import MethodError, parse_method

    methods = []
    for name in names:
        try:
            methods.append(parse_method(name))
        except MethodError as exc:
            raise click.BadParameter(str(exc), param_hint="'--method'") from None
    return methods


def check_machines(found: list[Target], methods: list[Method]) -> None:
    """A resource-aware method needs a machine for every workflow.

    Raises
    ------
    click.UsageError
        A resource-aware method and an input without a machine.
    """
    aware = [m.name for m in methods if m.resource_aware]
    if aware and any(not machines for _, machines in found):
        raise click.UsageError(
            f"method {aware[0]!r} is resource-aware and an input defines no machine; pass --machine FILE|NAME"
        )


@functools.cache
def limitless() -> Machine:
    """Stands in for "no machine" when the oracle only checks dependencies and makespan."""
    from peakopt.models import Machine

    return Machine(name="limitless", capacity={})


def _cells(schedule: Schedule, score: Score) -> tuple[str, str, str]:
    from peakopt.plots.columns import figure  # the tables' module: the oracle's aggregates, pydantic

    if schedule.machine is None:
        return figure(score.makespan), "-", "-" if score.valid else "invalid"
    safe = "yes" if score.safe else ("invalid" if not score.valid else "no")
    if score.safe and score.slowed_makespan is not None and score.slowed_makespan > score.makespan:
        safe = f"yes, slowed to {figure(score.slowed_makespan)}"  # soft overflow costs time, shown
    return figure(score.makespan), figure(score.cva, 4), safe


def _detail(rows: list[tuple[Schedule, Score]]) -> Table:
    from rich.table import Table

    table = Table(title="peakopt schedule", title_justify="left")
    for column in ("workflow", "machine", "method", "makespan", "cva", "safe"):
        table.add_column(column, justify="right" if column in ("makespan", "cva") else "left")
    for schedule, score in rows:
        table.add_row(
            schedule.workflow, schedule.machine or "-", schedule.source or "", *_cells(schedule, score)
        )
    return table


#: What a schedule judged without a machine (on :func:`limitless`) has no figure for.
UNMEASURED = dict.fromkeys(("cva", "cva_floor", "avoidable_cva", "mru", "strict_mru", "safe_mru"))


def score_row(schedule: Schedule, score: Score) -> ScoreRow:
    """The oracle's row of one schedule; without a machine, no resource figures (``-``, not 0)."""
    from peakopt.oracle.tables.rows import ScoreRow

    row = ScoreRow.from_score(score)
    return row if schedule.machine is not None else row.model_copy(update={"machine": None, **UNMEASURED})


def _summary(rows: list[tuple[Schedule, Score]]) -> Table:
    """Per machine × method, the oracle's aggregate (the columns of ``peakopt score``'s table)."""
    from peakopt.cli.tables import Shown, score_table
    from peakopt.oracle.tables.aggregate import aggregate

    found = aggregate([score_row(s, score) for s, score in rows], ("machine", "source"))
    # every column: schedule has no --wide, and without an optimum cva and MRU are the figures to compare
    return score_table(
        found, gaps=False, title="peakopt schedule (means over workflows)", shown=Shown(wide=True)
    )


def print_table(rows: list[tuple[Schedule, Score]]) -> None:
    """Makespan, cva and safety per schedule (or per machine × method when many) on stderr."""
    print_tables(_detail(rows) if len(rows) <= DETAIL_ROWS else _summary(rows))


def _epilog() -> str:
    # the grammar is the methods module's docstring, read from its source: importing the module
    # (the heuristics, NumPy, the models) would cost `schedule --help` a second
    import peakopt.solver

    source = Path(peakopt.solver.__file__ or "").parent / "heuristics" / "methods.py"
    grammar = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8")), clean=False)
    lines = (grammar or "").split("::", 1)[-1].strip("\n").splitlines()
    return "Method names:\n\n\b\n" + "\n".join(line.rstrip() for line in lines if line.strip())


@click.command("schedule", epilog=_epilog())
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-m",
    "--method",
    "method_values",
    metavar="NAME[,NAME...]",
    multiple=True,
    default=("best:fast",),
    show_default=True,
    callback=method_list,
    help="Heuristic(s): NAME[,NAME...], repeatable; see below and --list.",
)
@click.option(
    "--machine",
    "machine_values",
    metavar="NAME|FILE",
    multiple=True,
    help="A machine of the inputs by name, or a file of machines; repeatable.",
)
@seed_option("Seed of the random rule, sampling and plug-ins.")
@click.option(
    "-o",
    "--output",
    metavar="SCHEDULES.jsonl",
    help=f"Write the schedules (JSON Lines) to this file. {REPLACES}",
)
@click.option("--json", "as_json", is_flag=True, help="Print the schedules on stdout (JSON Lines).")
@click.option(
    "--list",
    "list_methods",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_list_methods,
    help="List the built-in methods and exit.",
)
@soft_as_hard_option
@input_options
@quiet_option
def schedule_command(
    paths: tuple[str, ...],
    method_values: tuple[str, ...],
    machine_values: tuple[str, ...],
    seed: int,
    output: str | None,
    as_json: bool,
    fmt: str | None,
    cpu: str,
    keep_dummies: bool,
    soft_as_hard: bool,
) -> None:
    """Schedule every workflow × machine × method with heuristics.

    Writes one JSON Lines record {"workflow", "machine", "source", "starts"}
    per schedule (what `peakopt score` reads) and prints makespan, cva and
    safety, as the oracle judges them, on stderr (soft resources such as cpu
    slow a schedule down rather than make it unsafe, unless --soft-as-hard).

    Example: peakopt schedule bundled:refund --method asap,fbi:sgs:parallel:lft --json
    """
    from peakopt.instances.native import to_jsonl
    from peakopt.instances.records import schedule_record
    from peakopt.oracle import evaluate

    methods = parse_methods(method_values)
    out = claim(output, (*paths, *machine_values))
    found = targets(
        paths, machine_values, {"format": fmt, "cpu": cpu, "keep_dummies": keep_dummies}, need_machine=False
    )
    check_machines(found, methods)
    rows: list[tuple[Schedule, Score]] = []
    for workflow, found_machines in found:
        machines: list[Machine | None] = list(found_machines)
        for machine in machines or [None]:  # resource-blind methods need no machine
            for method in methods:
                result = method.schedule(workflow, machine, seed=seed)
                score = evaluate(workflow, machine or limitless(), result, soft_as_hard=soft_as_hard)
                rows.append((result, score))
    text = to_jsonl(schedule_record(s) for s, _ in rows)
    if out is not None:
        out.write_text(text)
    if as_json:
        click.echo(text, nl=False)
    print_table(rows)
    if out is not None:
        wrote(output, plural(len(rows), "schedule"))
