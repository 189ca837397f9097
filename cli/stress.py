"""``peakopt stress``: heuristics against the optimum over whole suites, parallel and resumable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from peakopt.cli.cluster import executor_options, positive, progress_bar, solve_options, start, where
from peakopt.cli.common import input_options, warn
from peakopt.cli.report import emit, parse_by, summaries
from peakopt.cli.score import load_references
from peakopt.cli.targets import targets
from peakopt.solver.adversarial import Candidate, SearchResult, SearchSpec, search
from peakopt.solver.campaign import Pair, Plan, Settings, auto_chunk, check_methods, plan, run_campaign
from peakopt.solver.executors import Executor, Where
from peakopt.solver.export import Case, worst_cases, write_cases
from peakopt.solver.store import Found, Store


def _methods(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    names = [n.strip() for v in value for n in v.split(",") if n.strip()]
    if not names:
        raise click.BadParameter("name at least one method")
    return tuple(dict.fromkeys(names))


def _run(executor: Executor, todo: Plan, store: Store, chunk: int | None, console: Console) -> None:
    """Run the plan's items with a progress bar; results go to the store as they arrive."""
    size = chunk or auto_chunk(len(todo.items), executor.slots)
    with progress_bar(console, "stress", "rows") as bar:
        task = bar.add_task(executor.where.describe(), total=todo.rows)
        for done in run_campaign(executor, todo.items, store, chunk=size):
            bar.advance(task, len(done.results))


def _search(
    executor: Executor, store: Store, spec: SearchSpec, pairs: Sequence[Pair], console: Console
) -> SearchResult:
    """Adversarial search from the method's worst cases in the store (or the first instances)."""
    seeds = [
        Candidate(c.workflow, c.machine, c.row.gap, c.row, c.reference)
        for c in worst_cases(store, [spec.method], spec.population)
    ]
    seeds = seeds or [
        Candidate(p.workflow, m, None) for p in pairs[: spec.population] for m in p.machines[:1]
    ]
    with progress_bar(console, "search", "instances") as bar:
        task = bar.add_task(f"{spec.method}: worst gap -", total=spec.evaluations)

        def show(judged: int, worst: float) -> None:
            bar.update(task, completed=judged, description=f"{spec.method}: worst gap {100 * worst:.1f}%")

        return search(executor, seeds, spec, progress=show)


def _search_table(found: SearchResult, method: str) -> Table:
    table = Table(title=f"adversarial search: {method}", title_justify="left")
    for column in ("workflow", "machine", "tasks", "gap", "makespan", "optimum", "mutations"):
        table.add_column(
            column, justify="left" if column in ("workflow", "machine", "mutations") else "right"
        )
    for c in found.worst:
        optimum = None if c.reference is None else c.reference.makespan
        table.add_row(
            c.workflow.id,
            c.machine.name,
            str(len(c.workflow.tasks)),
            "-" if c.gap is None else f"{100 * c.gap:.1f}%",
            "-" if c.row is None or c.row.makespan is None else f"{c.row.makespan:g}",
            "-" if optimum is None else f"{optimum:g}",
            "; ".join(c.mutations),
        )
    return table


def _save_search(found: SearchResult, spec: SearchSpec, keep: int, directory: str) -> list[Path]:
    cases = [
        Case(spec.method, c.workflow, c.machine, c.row, c.reference, spec.settings.seed)
        for c in found.worst[:keep]
        if c.row is not None and c.gap is not None
    ]
    return write_cases(cases, Path(directory) / "search")


@click.command("stress")
@click.argument("paths", metavar="SUITE...", nargs=-1, required=True)
@input_options
@click.option(
    "-m",
    "--method",
    "methods",
    multiple=True,
    required=True,
    callback=_methods,
    help="Heuristics to test, comma-separated or repeated (built-ins, module:function plug-ins).",
)
@solve_options(time_limit=10.0, workers=1, per="per optimum (workflow × machine)")
@click.option("--db", required=True, metavar="RESULTS.sqlite", help="The results store (created if missing).")
@click.option("-r", "--reference", help="Reference results (peakopt solve -o) to reuse instead of solving.")
@click.option(
    "--method-limit",
    type=float,
    default=60.0,
    show_default=True,
    callback=positive,
    help="Seconds one method may take on one instance; then its row is an error.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the solver, methods and search."
)
@executor_options(jobs_default="the cores")
@click.option("--chunk", type=int, callback=positive, help="Instances per task [default: automatic].")
@click.option("--fresh", is_flag=True, help="Drop everything in the store first.")
@click.option(
    "--by",
    default="method",
    show_default=True,
    callback=parse_by,
    help="Also group the summary by tier,machine.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON list.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the summary as CSV.")
@click.option(
    "--worst", type=int, callback=positive, metavar="K", help="Export each method's K worst instances."
)
@click.option("--worst-dir", default="worst", show_default=True, help="Where --worst and --search write.")
@click.option(
    "--search", type=int, callback=positive, metavar="N", help="Adversarial search: judge N mutants."
)
def stress(
    paths: tuple[str, ...],
    fmt: str | None,
    cpu: str,
    keep_dummies: bool,
    methods: tuple[str, ...],
    machines: tuple[str, ...],
    db: str,
    reference: str | None,
    time_limit: float,
    workers: int,
    method_limit: float,
    seed: int,
    jobs: int | None,
    dask_local: int | None,
    scheduler: str | None,
    chunk: int | None,
    fresh: bool,
    by: tuple[str, ...],
    as_json: bool,
    as_csv: bool,
    worst: int | None,
    worst_dir: str,
    search: int | None,
) -> None:
    """Run heuristics against the optimum on every workflow × machine of the suites.

    Each optimum is computed once (or read from --reference or the store);
    each method's schedule is scored by the oracle. Rows go to the SQLite
    store as they finish: rerun the same command to resume, --fresh to start
    over. Ends with the per-method summary that `peakopt report` prints.

    Example: peakopt stress bundled:default -m asap,admission,fbi:best-rule --db results.sqlite --worst 5
    """
    if search and len(methods) != 1:
        raise click.UsageError("--search needs exactly one --method")
    place = where(jobs, dask_local, scheduler)
    check_methods(methods)
    settings = Settings(time_limit=time_limit, workers=workers, seed=seed, method_limit=method_limit)
    read = {"format": fmt, "cpu": cpu, "keep_dummies": keep_dummies}
    pairs = [Pair(w, tuple(ms)) for w, ms in targets(paths, machines, read)]
    used = [m for p in pairs for m in p.machines]
    refs = load_references(reference, [p.workflow for p in pairs], used) if reference else None
    store = Store(db, fresh=fresh)
    console = Console(stderr=True)
    try:
        todo = plan(pairs, methods, settings, store, refs)
        if todo.skipped:
            warn(f"resuming: {todo.skipped} rows already in {db}, {todo.rows} to run")
        _work(place, todo, store, chunk, console, search, settings, methods, pairs, worst_dir)
        if worst:
            written = write_cases(worst_cases(store, methods, worst, seed), worst_dir)
            console.print(f"wrote {len(written)} worst cases to {worst_dir}/", highlight=False)
        rows = store.score_rows(todo.keys)
    except KeyboardInterrupt:
        kept = store.count()
        store.close()
        click.echo(f"Interrupted: {kept} rows kept in {db}; run the same command again to resume", err=True)
        raise SystemExit(130) from None
    store.close()
    emit(summaries(rows, by), as_json, as_csv, f"peakopt stress: {len(rows)} rows in {db}")


def _work(
    place: Where,
    todo: Plan,
    store: Store,
    chunk: int | None,
    console: Console,
    evaluations: int | None,
    settings: Settings,
    methods: tuple[str, ...],
    pairs: Sequence[Pair],
    worst_dir: str,
) -> None:
    """The campaign, then the search, on one executor (started only when there is work)."""
    if not todo.items and not evaluations:
        return
    with start(place) as executor:
        if todo.items:
            _run(executor, todo, store, chunk, console)
        if evaluations:
            spec = SearchSpec(methods[0], evaluations, seed=settings.seed, settings=settings)
            found = _search(executor, store, spec, pairs, console)
            console.print(_search_table(found, spec.method))
            store.write_search(
                [
                    Found(
                        spec.method,
                        settings.params,
                        c.workflow,
                        c.machine,
                        c.gap,
                        c.evaluation,
                        c.mutations,
                        c.row,
                        c.reference,
                    )
                    for c in found.worst
                ]
            )
            saved = _save_search(found, spec, spec.population, worst_dir)
            console.print(f"wrote {len(saved)} search cases to {worst_dir}/search/", highlight=False)
