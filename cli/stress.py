"""``peakopt stress``: heuristics against the optimum over whole suites, parallel and resumable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from peakopt.cli.cluster import SolveOptions, progress_bar, solving_options, start
from peakopt.cli.common import ReadOptions, read_options, soft_as_hard_option
from peakopt.cli.group import interrupted
from peakopt.cli.messages import console, note, plural, quiet_option, resume_hint, wrote
from peakopt.cli.options import check_by, method_list
from peakopt.cli.outputs import claim
from peakopt.cli.stress_noise import NoiseOptions, bound_items, noise_group, noisy_rows
from peakopt.cli.stress_options import CampaignOptions, CaseOptions, campaign_options, case_options
from peakopt.cli.summaries import SummaryOptions, fail_on_option, gate, show_summaries, summary_group
from peakopt.cli.tables import check_formats
from peakopt.cli.targets import targets

# The campaign (its store, runner and search), rich and the rows' model are imported by the
# functions that use them, so that `stress --help` imports no pydantic.
if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from peakopt.campaign.adversarial import AdversarialResult, AdversarialSpec
    from peakopt.campaign.executors import Executor, Where
    from peakopt.campaign.gates import Threshold
    from peakopt.campaign.store import Store
    from peakopt.campaign.stress import Backlog, Pair, Settings


def _resuming(todo: Backlog, db: str) -> str:
    stale = f" ({todo.stale} made by other code of their method or of the oracle)" if todo.stale else ""
    return f"resuming: {plural(todo.skipped, 'row')} already in {db}, {todo.rows} to run{stale}"


def _run(
    executor: Executor, todo: Backlog, store: Store, chunk: int | None, console: Console, settings: Settings
) -> None:
    """Run the backlog's items with a progress bar; results go to the store as they arrive.

    Under noise, each scenario's perfect-information bound is found first (and kept in the store).
    """
    from peakopt.campaign.stress import CAMPAIGN, auto_chunk, run_campaign
    from peakopt.campaign.stress_noise import NOISY

    items, work = todo.items, CAMPAIGN
    if settings.noise is not None:
        items, work = bound_items(executor, items, store, settings, console), NOISY
    size = chunk or auto_chunk(len(items), executor.slots)
    with progress_bar(console, "stress", "rows") as bar:
        task = bar.add_task(executor.where.describe(), total=todo.rows)
        for done in run_campaign(executor, items, store, chunk=size, work=work):
            bar.advance(task, len(done.results))


def _search(
    executor: Executor, store: Store, spec: AdversarialSpec, pairs: Sequence[Pair], console: Console
) -> AdversarialResult:
    """Adversarial search from the method's worst cases in the store (or the first instances)."""
    from peakopt.campaign.adversarial import Candidate, adversarial_search
    from peakopt.campaign.export import worst_cases

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

        return adversarial_search(executor, seeds, spec, progress=show)


def _search_table(found: AdversarialResult, method: str) -> Table:
    from rich.table import Table

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


def _save_search(found: AdversarialResult, spec: AdversarialSpec, keep: int, directory: str) -> list[Path]:
    from peakopt.campaign.export import Case, write_cases

    cases = [
        Case(spec.method, c.workflow, c.machine, c.row, c.reference, spec.settings.seed)
        for c in found.worst[:keep]
        if c.row is not None and c.gap is not None
    ]
    return write_cases(cases, Path(directory) / "search")


@click.command("stress")
@click.argument("paths", metavar="SUITE...", nargs=-1, required=True)
@read_options
@click.option(
    "-m",
    "--method",
    "methods",
    metavar="NAME[,NAME...]",
    multiple=True,
    required=True,
    callback=method_list,
    help="Heuristics to test, comma-separated or repeated (built-ins, module:function plug-ins).",
)
@solving_options(per="per optimum (workflow × machine)")
@campaign_options
@summary_group("Also group the summary by these comma-separated fields (tier,machine,workflow).")
@case_options
@noise_group
@fail_on_option
@soft_as_hard_option
@quiet_option
def stress(
    paths: tuple[str, ...],
    read: ReadOptions,
    methods: tuple[str, ...],
    solving: SolveOptions,
    campaign: CampaignOptions,
    summary: SummaryOptions,
    cases: CaseOptions,
    noise: NoiseOptions,
    fail_on: list[Threshold],
    soft_as_hard: bool,
) -> None:
    """Run heuristics against the optimum on every workflow × machine of the suites.

    Each optimum is computed once (or read from --reference or the store);
    each method's schedule is scored by the oracle. Rows go to the SQLite
    store as they finish: rerun the same command to resume (rows whose method
    or oracle code changed are run again), --redo METHOD to run one method
    again, --fresh to start over. Ends with the per-method summary that
    `peakopt report` prints and the failed runs' reasons; exits 1 when every
    row failed or a --fail-on threshold is crossed.

    Under noise (--noise, --noise-demand, or --distribution: the stochastic
    RCPSP literature's protocol) every method is judged on --samples seeded
    scenarios of each workflow, the same for every method: through its online
    form, or its plan executed by --execute; the robust reference (and, with
    --execute, the optimum) are rows too. Rows then hold the Monte Carlo
    figures, with the gap to each scenario's own optimum.

    A machine's soft resources (cpu in the bundled machines) make a schedule
    that oversubscribes them slower, not unsafe; --soft-as-hard judges every
    resource as hard (its rows are stored apart: the machine's content differs).

    Example: peakopt stress bundled:default -m asap,admission,fbi:best-rule --db results.sqlite --worst 5
    """
    from peakopt.campaign.export import worst_cases, write_cases
    from peakopt.campaign.references import ReferenceFile
    from peakopt.campaign.store import Store
    from peakopt.campaign.stress import Pair, Settings, backlog, check_methods
    from peakopt.campaign.summaries import summaries
    from peakopt.oracle.tables.rows import ScoreRow

    if cases.search and len(methods) != 1:
        raise click.UsageError("--search needs exactly one --method")
    run = noise.run()
    if run is not None and cases.search:
        raise click.UsageError("--search judges schedules at nominal durations: not under noise")
    rows_of = methods if run is None else (*methods, *noisy_rows(run))
    unknown = [m for m in campaign.redo if m not in rows_of]
    if unknown:
        raise click.UsageError(f"--redo {', '.join(unknown)}: not among the --method names")
    check_formats(summary.as_json, summary.as_csv)
    place = campaign.executors.where()
    db, reference, worst_dir = campaign.db, campaign.reference, cases.worst_dir
    if cases.worst or cases.search:
        inputs = [*paths, *solving.machines, *([reference] if reference else [])]
        claim(worst_dir, inputs, option="--worst-dir", directory=True)
    check_methods(methods)
    settings = Settings(
        time_limit=solving.time_limit,
        workers=solving.workers,
        seed=campaign.seed,
        method_limit=campaign.method_limit,
        noise=run,
    )
    pairs = [
        Pair(w, tuple(m.as_hard() if soft_as_hard else m for m in ms))
        for w, ms in targets(paths, solving.machines, read.as_dict())
    ]
    for pair in pairs:
        if run is not None:  # a duration the noise cannot take: refused before the store is made
            run.check(pair.workflow)
    used = [(p.workflow, m) for p in pairs for m in p.machines]
    refs = ReferenceFile(reference, used) if reference else None
    # a campaign's rows have the fields of every score row and no labels but the noise settings':
    # a --by typo is refused now, not after the run
    check_by([ScoreRow(valid=False, labels=dict.fromkeys(run.params if run else {}, ""))], summary.by)
    store = Store(db, fresh=campaign.fresh)
    written_cases = []
    try:
        todo = backlog(pairs, rows_of, settings, store, refs, redo=campaign.redo)
        if todo.skipped or todo.stale:
            note(_resuming(todo, db))
        searched = _work(
            place, todo, store, campaign.chunk, console(), cases.search, settings, methods, pairs, worst_dir
        )
        if cases.worst:
            written = write_cases(worst_cases(store, methods, cases.worst, campaign.seed), worst_dir)
            written_cases.append(f"{plural(len(written), 'worst case')} in {worst_dir}/")
        if searched is not None:
            written_cases.append(f"{plural(searched, 'search case')} in {worst_dir}/search/")
        rows = store.score_rows(todo.keys)
    except KeyboardInterrupt as exc:
        kept = store.count()
        store.close()
        interrupted(exc, f"{kept} rows kept in {db}; {resume_hint(campaign.fresh)}")
    except BaseException:
        store.close()  # a store locked mid-run, for one: the rows written so far stay
        raise
    store.close()
    found = summaries(rows, summary.by)
    title = f"peakopt stress: {len(rows)} rows in {db}"
    show_summaries(found, summary.as_json, summary.as_csv, title, rows, shown=summary.shown)
    wrote(db, "; ".join([f"{plural(len(rows), 'row')} ({todo.rows} run now)", *written_cases]))
    gate(found, fail_on, rows)


def _work(
    place: Where,
    todo: Backlog,
    store: Store,
    chunk: int | None,
    console: Console,
    evaluations: int | None,
    settings: Settings,
    methods: tuple[str, ...],
    pairs: Sequence[Pair],
    worst_dir: str,
) -> int | None:
    """The campaign, then the search, on one executor (started only when there is work).

    Returns the number of search cases written (None without a search).
    """
    from peakopt.campaign.adversarial import AdversarialSpec
    from peakopt.campaign.store import Found
    from peakopt.cli.widths import fit  # rich

    if not todo.items and not evaluations:
        return None
    items = max(len(todo.items), AdversarialSpec.batch if evaluations else 0)
    with start(place, items) as executor:
        if todo.items:
            _run(executor, todo, store, chunk, console, settings)
        if evaluations:
            spec = AdversarialSpec(methods[0], evaluations, seed=settings.seed, settings=settings)
            found = _search(executor, store, spec, pairs, console)
            console.print(fit(_search_table(found, spec.method), console.width))
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
            return len(_save_search(found, spec, spec.population, worst_dir))
    return None
