"""Commands that make data: generate (suites and stress workflows) and prompt."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from peakopt.campaign.ranges import COUNT, COUNT_OR_NONE, PROBABILITY, SEED_MAX, Finite
from peakopt.cli.common import input_options, summary, warn
from peakopt.cli.messages import note, plural, print_tables, quiet_option, wrote
from peakopt.cli.options import seed_option
from peakopt.cli.outputs import REPLACES, Output, claim
from peakopt.cli.targets import Scopes
from peakopt.instances.errors import InputError
from peakopt.instances.names import DEFAULT_COUNTS, KINDS, SETTINGS, TASKS

if TYPE_CHECKING:
    from rich.table import Table

    from peakopt.instances.catalog import Catalog
    from peakopt.instances.generator import SuiteSpec
    from peakopt.models import Suite

# The generators, the readers and the models are imported by the functions that use them:
# `generate --help` and `prompt --help` import no pydantic.

SUITE_FILE = "suite.json"
F = TypeVar("F", bound=Callable[..., Any])
_STRESS_ONLY = ("width", "resources", "strength", "kind", "complexity", "factor", "count")

# Ranges past which the generators only make overflowing numbers or take hours: a noise
# of 20 already draws memory demands of 1e10 MB, and each resource is drawn for every task.
NOISE_MAX = 10.0
RESOURCES_MAX = 100
COMPLEXITY_MAX = 1000.0


def _machines_table(suite: Suite) -> Table:
    from rich.table import Table

    from peakopt.plots.columns import figure

    resources = sorted({r for m in suite.machines for r in m.capacity})
    table = Table("machine", *resources, title="machine profiles")
    for machine in suite.machines:
        table.add_row(machine.name, *(figure(machine.capacity.get(r)) for r in resources))
    return table


def _claim(output: str | None, catalog: str | None) -> Output | None:
    """The output, checked and locked: a .json file, or a directory (created if missing)."""
    if output is None:
        return None
    return claim(output, [catalog] if catalog else [], directory=not output.lower().endswith(".json"))


def _emit(suite: Suite, out: Output | None, name: str) -> Path | None:
    """The suite on stdout, in the -o file, or in NAME.json in the -o directory (replaced atomically).

    Returns the file written (None for stdout).
    """
    from peakopt.instances.compact import compact_json
    from peakopt.instances.native import write_atomic

    text = compact_json(suite)
    if out is None:
        click.echo(text, nl=False)
        return None
    if out.directory:
        target = Path(out.path) / f"{name}.json"
        write_atomic(target, text)
    else:
        target = Path(out.path)
        out.write_text(text)
    return target


def _number(name: str, kind: Any, default: float, text: str) -> Callable[[F], F]:
    """A numeric option that shows its default."""
    return click.option(name, type=kind, default=default, show_default=True, help=text)


@click.command()
@seed_option("Seed of the random stream.")
@_number("--easy", COUNT_OR_NONE, DEFAULT_COUNTS["easy"], "Easy workflows (1-2 servers, 2-4 calls).")
@_number("--medium", COUNT_OR_NONE, DEFAULT_COUNTS["medium"], "Medium workflows (3-5 servers, 5-8 calls).")
@_number("--hard", COUNT_OR_NONE, DEFAULT_COUNTS["hard"], "Hard workflows (6-10 servers, 10-15 calls).")
@_number("--piecewise", PROBABILITY, 0.0, "Share of spiky calls drawn as piecewise profiles.")
@_number("--noise", Finite(0, NOISE_MAX), 1.0, "Scale of the per-call input noise.")
@click.option(
    "--varies/--no-varies",
    default=True,
    show_default=True,
    help="Give each call its duration's run-to-run spread (varies, from the catalog).",
)
@click.option(
    "--catalog",
    "catalog_path",
    metavar="FILE.json",
    help="A tool catalog JSON file instead of the bundled one.",
)
@click.option("--tasks", type=COUNT, help="Make stress instances of N tasks instead of a suite.")
@click.option("--kind", type=click.Choice(KINDS), default="layered", show_default=True, help="Stress kind.")
@click.option("--width", type=COUNT, help="Stress: calls per layer / predecessor window.")
@click.option("--resources", type=click.IntRange(1, RESOURCES_MAX), help="Stress: number of resources.")
@_number("--strength", PROBABILITY, 0.5, "Stress: Kolisch resource strength of the machine.")
@_number("--complexity", Finite(0, COMPLEXITY_MAX), 1.8, "rcpsp: precedence edges per task.")
@_number("--factor", Finite(0, 1, min_open=True), 0.5, "rcpsp: resource factor.")
@_number("--count", COUNT, 1, "Stress: instances (seeds seed, seed+1...).")
@click.option(
    "--stats",
    is_flag=True,
    help="Solve every pair and print the floor: the share of pairs each trivial answer (every step at 0, "
    "one at a time, ASAP) solves optimally, and the hard split's size.",
)
@click.option(
    "--max-trivial",
    type=PROBABILITY,
    metavar="SHARE",
    help="Redraw workflows until at most SHARE of the pairs are solved optimally by a trivial answer "
    "(machines kept as first drawn; prints the floor). A redraw is seeded by --seed, its id and attempt.",
)
@click.option(
    "-o",
    "--output",
    metavar="FILE.json|DIR",
    help=f"A .json file, or a directory (gets {SUITE_FILE} or one file per instance; created if missing, "
    f"in an existing folder). Default: stdout. {REPLACES}",
)
@quiet_option
@click.pass_context
def generate(ctx: click.Context, /, output: str | None, tasks: int | None, **options: Any) -> None:
    """Generate a synthetic PeakBench-like suite, or large stress instances.

    Without --tasks: easy/medium/hard agent workflows drawn from the tool
    catalog, with small/medium/large machines by PeakBench's rule. The
    defaults reproduce bundled:default byte for byte. With --tasks N: layered
    agent DAGs or random RCPSP instances with a resource-strength machine.

    Example: peakopt generate --seed 0 -o suites/
    """
    if tasks is None:
        given = [o for o in _STRESS_ONLY if ctx.get_parameter_source(o) == ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"--{given[0]} needs --tasks (it shapes stress instances)")
        _suite_mode(output, options)
    else:
        for name in ("stats", "max_trivial"):
            if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
                flag = "--" + name.replace("_", "-")
                raise click.UsageError(f"{flag} is for suites: it does not go with --tasks")
        _stress_mode(output, tasks, options)


def _catalog(path: str | None) -> Catalog | None:
    if path is None:
        return None
    from peakopt.instances.catalog import parse_catalog
    from peakopt.instances.paths import read_text

    return parse_catalog(read_text(path), path)


def _suite_mode(output: str | None, options: dict[str, Any]) -> None:
    from peakopt.instances.generator import SuiteSpec, generate_suite

    counts = {t: int(options[t]) for t in DEFAULT_COUNTS}
    if not any(counts.values()):
        raise click.UsageError("--easy, --medium and --hard are all 0: nothing to generate")
    out = _claim(output, options["catalog_path"])
    spec = SuiteSpec(int(options["seed"]), counts, options["piecewise"], options["noise"], options["varies"])
    catalog = _catalog(options["catalog_path"])
    suite = generate_suite(spec, catalog)
    found = None
    if options["max_trivial"] is not None or options["stats"]:
        suite, found = _floor(suite, spec, catalog, options["max_trivial"])
    target = _emit(suite, out, SUITE_FILE.removesuffix(".json"))
    print_tables(_machines_table(suite))
    if found is not None:
        for line in found:
            note(line)
    if target is not None:
        wrote(target, summary(suite))


def _floor(
    suite: Suite, spec: SuiteSpec, catalog: Catalog | None, most: float | None
) -> tuple[Suite, list[str]]:
    """The suite (redrawn to keep its trivial share at most ``most``, if given) and its floor's lines."""
    # here: the floor solves every pair (OR-Tools), which a plain generate never needs
    from peakopt.campaign.floor import describe, redraw_trivial, solved_references, suite_floor
    from peakopt.instances.generator import redraw_workflow

    if most is None:
        return suite, describe(suite_floor(suite, solved_references(suite)))
    made = redraw_trivial(suite, most, redraw=lambda w, k: redraw_workflow(w, k, spec, catalog))
    note(f"redrew {plural(made.redrawn, 'workflow')} to keep the trivial share at most {most:g}")
    if not made.reached:
        share = made.floor.trivial / made.floor.pairs
        warn(
            f"the trivial share stayed at {share:.3f}, above {most:g}: "
            "a machine that every workflow of a tier fits makes ASAP optimal there"
        )
    return made.suite, describe(made.floor)


def _stress_mode(output: str | None, tasks: int, options: dict[str, Any]) -> None:
    from peakopt.instances.large import LargeSpec, large_suite

    count = int(options["count"])
    if int(options["seed"]) + count - 1 > SEED_MAX:
        raise click.BadParameter(
            f"--count {count} from --seed {options['seed']} passes the largest seed, {SEED_MAX}",
            param_hint="'--count'",
        )
    if count > 1 and (output is None or output.lower().endswith(".json")):
        raise click.UsageError("--count above 1 needs -o DIR (a directory), not a file or stdout")
    out = _claim(output, options["catalog_path"])
    catalog = _catalog(options["catalog_path"])
    made, target = [], None
    for i in range(count):
        spec = LargeSpec(
            kind=str(options["kind"]),
            tasks=tasks,
            width=None if options["width"] is None else int(options["width"]),
            resources=None if options["resources"] is None else int(options["resources"]),
            strength=options["strength"],
            complexity=options["complexity"],
            factor=options["factor"],
            seed=int(options["seed"]) + i,
        )
        made.append(large_suite(spec, catalog))
        target = _emit(made[-1], out, spec.name)
    if target is not None:
        where = target if count == 1 else f"{plural(count, 'file')} in {out.path if out else ''}/"
        wrote(where, summary(*made))


def _schedule_records(scopes: Scopes, setting: str, machines: tuple[str, ...]) -> list[dict[str, Any]]:
    from peakopt.instances.prompts import prompt_records

    known = {m.name for suite in scopes.suites for m in suite.machines}
    for name in machines:
        if name not in known:
            known_list = ", ".join(sorted(known)) or "none"
            raise click.BadParameter(f"no machine {name!r}; known: {known_list}", param_hint="--machine")
    records: list[dict[str, Any]] = []
    for path, suite in scopes.files:
        if not suite.machines:
            raise InputError(path, "machines", "prompts need machine profiles; the input has none")
        names = {m.name for m in suite.machines}
        chosen = [name for name in machines if name in names]
        if machines and not chosen:
            continue  # --machine names none of the machines this file's workflows run on
        records.extend(prompt_records(suite, setting, chosen or None))
    return records


def _plan_records(scopes: Scopes) -> list[dict[str, Any]]:
    from peakopt.instances.prompts import plan_prompt_record

    records = []
    for path, suite in scopes.files:
        for workflow in suite.workflows:
            try:
                records.append(plan_prompt_record(workflow))
            except ValueError as exc:
                raise InputError(path, f"workflow {workflow.id!r}", str(exc)) from None
    return records


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="SUITE...")
@click.option(
    "--task",
    type=click.Choice(TASKS),
    default="schedule",
    show_default=True,
    help="schedule: start times on a machine; plan: the dependency structure, read from the tool calls.",
)
@click.option(
    "--setting",
    type=click.Choice(SETTINGS),
    help="What a schedule prompt's context gives (default rasc): rasc (durations, CPU, memory and "
    "capacities), durations, cpu, memory, cpu-memory, or no-profile (structure only).",
)
@click.option(
    "--machine", "machines", multiple=True, metavar="NAME", help="Only these machine profiles (repeatable)."
)
@click.option(
    "-o", "--output", metavar="PROMPTS.jsonl", help=f"JSON Lines file to write. Default: stdout. {REPLACES}"
)
@input_options
@quiet_option
def prompt(
    paths: tuple[str, ...],
    task: str,
    setting: str | None,
    machines: tuple[str, ...],
    output: str | None,
    fmt: str | None,
    cpu: str,
    keep_dummies: bool,
) -> None:
    """Write LLM prompts: scheduling (per workflow × machine) or planning (per workflow).

    A scheduling record holds workflow, machine, task, setting, tier, the
    prompt text, the context (of the setting) and the answer's JSON Schema;
    keep {"workflow", "machine", "source", "setting", "response"} answers for
    peakopt score. A planning record (--task plan) gives the user's request
    and every step's tool call instead of the dependencies; keep {"workflow",
    "source", "response"} answers for peakopt plan-score.

    Example: peakopt prompt bundled:default --setting durations -o prompts.jsonl
    """
    from peakopt.instances.native import to_jsonl

    if task == "plan" and (setting or machines):
        raise click.UsageError("--setting and --machine apply to --task schedule; a plan prompt has neither")
    out = claim(output, paths)
    scopes = Scopes.read(paths, fmt, cpu, keep_dummies)
    setting = setting or "rasc"
    records = _plan_records(scopes) if task == "plan" else _schedule_records(scopes, setting, machines)
    text = to_jsonl(records)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text)
    kind = "plan" if task == "plan" else setting
    what = f"{plural(len(records), 'prompt')} ({kind}) for {summary(*scopes.suites)}"
    if output is None:
        note(what)
    else:
        wrote(output, what)
