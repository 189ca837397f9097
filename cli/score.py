"""Commands that judge answers: score (schedules, raw LLM responses) and plan-score."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from peakopt.cli.cluster import progress_bar
from peakopt.cli.common import (
    ReadOptions,
    harden,
    read_options,
    soft_as_hard_option,
    warn,
    warn_unconstrained,
)
from peakopt.cli.exports import check_export, format_option, show_tables
from peakopt.cli.messages import console, note, plural, quiet_option, wrote
from peakopt.cli.options import by_option, check_by, grouped, split_option
from peakopt.cli.outputs import REPLACES, Output, claim
from peakopt.cli.runs import RunInputs, TraceOptions, machine_for, score_runs, traces_group
from peakopt.cli.sampling import (
    BOUND_LIMIT,
    RUN_LIMIT,
    SamplingOptions,
    check_sampling,
    execution,
    sampling_group,
)
from peakopt.cli.score_files import answer_records, load_references, read_scores, scope_pairs
from peakopt.cli.tables import (
    Shown,
    check_formats,
    correlation_table,
    dump_rows,
    emit,
    format_options,
    monte_carlo_table,
    plan_table,
    score_columns,
    score_table,
    shown_group,
)
from peakopt.cli.targets import Scopes
from peakopt.oracle.answers.names import DELAY_FROM, MISSING, DelayFrom, Missing, Mode
from peakopt.oracle.tables.names import GROUP_KEYS, PLAN_GROUP_KEYS

# The oracle, the floor, the readers and the models are imported by the functions that use them,
# so that `score --help` and `plan-score --help` import no pydantic.
if TYPE_CHECKING:
    from pydantic import BaseModel

    from peakopt.instances.records import Record
    from peakopt.models import Machine, Workflow
    from peakopt.oracle.judge.references import Checked
    from peakopt.oracle.tables.rows import PlanRow, ScoreRow
    from peakopt.oracle.tables.sampled import Sampling
    from peakopt.oracle.tables.score_rows import ReplayOptions
    from peakopt.oracle.uncertain.online import OnlinePolicy, PolicyFactory

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ReplayChoices:
    """``--delay-from`` and ``--missing``: how a record's plan is replayed."""

    delay_from: str
    missing: str

    def options(self) -> ReplayOptions:
        """As the oracle takes them."""
        from peakopt.oracle.tables.score_rows import ReplayOptions

        # click.Choice has checked the values against the Literal types' members
        return ReplayOptions(delay_from=cast(DelayFrom, self.delay_from), missing=cast(Missing, self.missing))


#: ``--delay-from`` and ``--missing``, reaching ``score`` as ``replay``, one :class:`ReplayChoices`.
replay_group = grouped(
    "replay",
    ReplayChoices,
    click.option(
        "--delay-from",
        type=click.Choice(DELAY_FROM),
        default="ready",
        show_default=True,
        help="What a requested_delay counts from: when the predecessors finish, or time 0.",
    ),
    click.option(
        "--missing",
        type=click.Choice(MISSING),
        default="invalid",
        show_default=True,
        help="Missing steps make a record invalid, or start as soon as ready (asap).",
    ),
)


def grouping(known: Sequence[str]) -> Callable[[F], F]:
    """The ``--by`` option: comma-separated grouping fields out of ``known``."""
    return by_option(
        known, f"Group the aggregates by these comma-separated fields ({','.join(known)}); '' for one group."
    )


def outputs(func: F) -> F:
    """``--json``, ``--csv``, ``-o``, ``--format`` and ``--quiet``: where the scores and the table go."""
    func = quiet_option(func)
    func = format_option(func)
    func = click.option(
        "-o",
        "--output",
        metavar="SCORES.jsonl",
        help=f"Write the per-record scores as JSON Lines. {REPLACES}",
    )(func)
    return format_options("the per-record scores", stream=True)(func)


@dataclass(frozen=True)
class OutputOptions:
    """The values of :func:`outputs`: where the scores and the tables go."""

    as_json: bool
    as_csv: bool
    output: str | None
    table_format: str | None


#: :func:`outputs`, reaching the command as ``writing``, one :class:`OutputOptions`.
output_group = grouped("writing", OutputOptions, outputs)


@dataclass(frozen=True)
class ScoreOutputs(OutputOptions):
    """:class:`OutputOptions`, and the summary table's columns (``--wide``, ``--columns``)."""

    shown: Shown


#: ``score``'s :func:`outputs` and :func:`~peakopt.cli.tables.shown_group`, as ``writing``.
score_output_group = grouped(
    "writing",
    ScoreOutputs,
    outputs,
    shown_group(lambda: [header for header, _ in score_columns(gaps=True)]),
)


def _claim(writing: OutputOptions, inputs: Sequence[str | None]) -> Output | None:
    """Check the output options, and the -o file, before any work."""
    check_formats(writing.as_json, writing.as_csv)
    check_export(writing.table_format, writing.as_json, writing.as_csv)
    return claim(writing.output, [i for i in inputs if i])


def _emit(rows: Sequence[BaseModel], writing: OutputOptions, out: Output | None) -> None:
    from peakopt.instances.native import to_jsonl

    if out is not None:
        out.write_text(to_jsonl(dump_rows(rows)))
    emit(rows, writing.as_json, writing.as_csv, stream=True)


def _count(rows: Sequence[ScoreRow] | Sequence[PlanRow], output: str | None) -> None:
    """The closing line: what was written where (or scored, without -o)."""
    counts = f"{plural(len(rows), 'record')}, {sum(not r.valid for r in rows)} invalid (counted, not dropped)"
    if output:
        wrote(output, counts)
    else:
        note(counts)


@click.command()
@click.argument("suite_paths", metavar="SUITE|TRACE...", nargs=-1, required=True)
@read_options
@click.option(
    "-s",
    "--schedules",
    metavar="SCHEDULES.jsonl|LOG.eval",
    help="JSON Lines of schedules or raw LLM responses, or an Inspect .eval log (needed unless "
    "the inputs hold traces).",
)
@click.option(
    "-r",
    "--reference",
    metavar="REFS.jsonl",
    help="JSON Lines of reference results (peakopt solve -o) for the gaps.",
)
@sampling_group
@replay_group
@split_option("needs --reference for every pair")
@traces_group
@soft_as_hard_option
@grouping(GROUP_KEYS)
@score_output_group
@click.pass_context
def score(
    ctx: click.Context,
    /,
    suite_paths: tuple[str, ...],
    read: ReadOptions,
    schedules: str | None,
    reference: str | None,
    sample: SamplingOptions,
    replay: ReplayChoices,
    split: str,
    traces: TraceOptions,
    soft_as_hard: bool,
    by: tuple[str, ...],
    writing: ScoreOutputs,
) -> None:
    """Score schedules or raw LLM responses against the oracle (and references).

    SUITE holds the workflows and machines, in any input format. Each line of
    the schedules file is {"workflow", "machine", "source", "starts"} or, for
    an LLM's raw answer, {"workflow", "machine", "source", "response"}.
    Per-group aggregates go to stderr; an unreadable or wrong record is
    scored invalid with its reason, never dropped.

    --execute says how a plan runs (at nominal durations, and over the
    scenarios of --samples): each row gains its Monte Carlo figures
    (probability of an avoidable overflow, expected and p95 makespan...,
    and the expected gap to each scenario's own optimum, the
    perfect-information bound), the scenarios drawn from the tasks' own
    varies, or from --noise and --noise-demand instead.

    A TRACE — a controller run (peakopt run -o) or an OpenTelemetry export
    (OTLP JSON), told from a suite by its content — is scored as it ran:
    its actual starts with every step's actual duration, and its gap to the
    optimum for those durations (hindsight), solved here within
    --bound-limit (10 s by default).

    Oversubscribing a machine's soft resources (cpu in the bundled machines)
    is safe but slow: the gaps and efficiency are figured from the slowed
    makespan; --soft-as-hard judges every resource as hard.

    Example: peakopt score bundled:refund --schedules answers.jsonl --reference refs.jsonl -o scores.jsonl

    Example: peakopt score trace.json
    """
    from peakopt.oracle.tables.aggregate import aggregate
    from peakopt.oracle.tables.pairs import with_settings
    from peakopt.oracle.tables.sampled import Sampling
    from peakopt.oracle.uncertain.scenarios import Noise

    how = execution(ctx, sample.execute, sample.replay)
    runs = RunInputs.split(suite_paths)
    runs.check(traces.machine_ref, traces.trace_id)
    _check_runs(ctx, runs, schedules)
    check_sampling(ctx, sample.samples, also_bounds=bool(runs.records))
    out = _claim(writing, [*suite_paths, schedules, reference])
    scopes = Scopes.read(runs.others, read.fmt, read.cpu, read.keep_dummies)
    scopes = Scopes((path, harden(suite, soft_as_hard)) for path, suite in scopes.files)
    machine = machine_for(traces.machine_ref, scopes.suites)
    warn_unconstrained(*scopes.suites)
    references = load_references(reference, scope_pairs(scopes))
    options = replay.options()
    seed, bound_limit = sample.seed, sample.bound_limit
    noise, noise_demand = sample.noise, sample.noise_demand
    drawn = None if noise is None and noise_demand is None else Noise(noise or 0.0, noise_demand or 0.0)
    # each scenario's own optimum, for the gap to the perfect-information bound (solved here, once per
    # scenario; ``stress --samples`` solves them on every core and keeps them in its store)
    optima = None
    if sample.samples:
        from peakopt.campaign.hindsight import hindsight_optima  # the solver: only when sampling

        optima = hindsight_optima(time_limit=BOUND_LIMIT if bound_limit is None else bound_limit, seed=seed)
    plugin = _online_plugin(how, scope_pairs(scopes)) if ":" in how else None
    sampling = Sampling(how, sample.samples or 0, seed, drawn, plugin, optima)
    records = answer_records(schedules) if schedules else []
    if split == "hard":
        records = hard_records(records, scopes, references, reference)
    rows = score_records(records, scopes, references, options, sampling) if records else []
    rows += score_runs(
        runs,
        demand=traces.demand,
        machine=machine,
        trace_id=traces.trace_id,
        time_limit=RUN_LIMIT if bound_limit is None else bound_limit,
        seed=seed,
        soft_as_hard=soft_as_hard,
    )
    check_by(rows, by)
    _emit(rows, writing, out)
    summaries = aggregate(rows, with_settings(rows, by), intervals=True)  # settings never merged
    tables = [score_table(summaries, gaps=bool(references) or bool(runs.records), shown=writing.shown)]
    if sample.samples:
        tables.append(monte_carlo_table(summaries, _title(sampling), writing.shown))
    show_tables(writing.table_format, tables)
    _count(rows, writing.output)


def hard_records(
    records: Sequence[Record], scopes: Scopes, references: Checked, reference: str | None
) -> list[Record]:
    """The records of the hard split's pairs (:func:`peakopt.campaign.floor.hard_pairs`), said on stderr.

    A record that names no pair of the inputs is kept: it is scored invalid with its reason.

    Raises
    ------
    click.UsageError
        Without ``--reference``.
    InputError
        When a pair of the inputs has no reference in it (the split needs every optimum).
    """
    from peakopt.campaign.floor import hard_pairs
    from peakopt.instances import InputError

    if reference is None:
        raise click.UsageError(
            "--split hard needs the optimum of every pair: give --reference (peakopt solve -o)"
        )
    pairs = scope_pairs(scopes)
    missing = [(w.id, m.name) for w, m in pairs if (w.id, m.name) not in references]
    if missing:
        workflow, machine = missing[0]
        rule = (
            f"--split hard needs a reference for every pair; none for {workflow} on {machine} "
            f"({len(missing)} of {len(pairs)} missing; peakopt solve -o writes them)"
        )
        raise InputError(reference, "", rule)
    hard = {
        pair
        for suite in scopes.suites
        for pair in hard_pairs(suite, references, [(w, m) for w, m in pairs if w in suite.workflows])
    }
    known = {(w.id, m.name) for w, m in pairs}
    kept = [
        r
        for r in records
        if r.data is None
        or (str(r.data.get("workflow")), str(r.data.get("machine"))) in hard
        or (str(r.data.get("workflow")), str(r.data.get("machine"))) not in known
    ]
    kept_text = f"{len(kept)} of {plural(len(records), 'record')} kept"
    note(f"the hard split: {len(hard)} of {len(pairs)} pairs; {kept_text}")
    return kept


def _check_runs(ctx: click.Context, runs: RunInputs, schedules: str | None) -> None:
    """Usage errors: nothing to score, schedules without their suite, a trace given plan options."""
    if schedules is None and not runs.records:
        raise click.UsageError("give --schedules, or traces (peakopt run -o, OpenTelemetry JSON) as inputs")
    if schedules is not None and not runs.others:
        raise click.UsageError("--schedules needs the suite its records are for among the inputs")
    if schedules is None:
        for name in ("execute", "replay", "samples", "noise", "noise_demand", "delay_from", "missing"):
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                raise click.UsageError(
                    f"--{name.replace('_', '-')} is for the plans of --schedules: a trace is scored as it ran"
                )


def _title(sampling: Sampling) -> str:
    """``peakopt score: enforced over 100 scenarios, noise ±10 % durations``."""
    noise = sampling.noise
    drawn = "the tasks' own varies"
    if noise is not None:
        drawn = f"noise ±{noise.duration:.0%} on durations, ±{noise.demand:.0%} on demands"
    return f"peakopt score --samples: {sampling.execution} over {sampling.samples} scenarios, {drawn}"


def score_records(
    records: Sequence[Record], scopes: Scopes, references: Checked, options: ReplayOptions, sampling: Sampling
) -> list[ScoreRow]:
    """Each record's row: the replay of its plan or, for other executions and samples, the simulator's."""
    from peakopt.oracle.tables.sampled import REPLAYED, Sampler, score_sampled
    from peakopt.oracle.tables.score_rows import ReplayOptions, score_record

    if not sampling.samples and sampling.factory is None and sampling.execution in REPLAYED:
        mode = ReplayOptions(cast(Mode, REPLAYED[sampling.execution]), options.delay_from, options.missing)
        return [
            score_record(r.data, scopes.of(r.data), references, mode, line=r.line, error=r.error)
            for r in records
        ]
    if sampling.execution == "pos" and sampling.factory is None:
        _warn_without_edges(records)
    sampler = Sampler(sampling)
    rows = []
    with progress_bar(console(), "score", "records") as bar:
        task = bar.add_task("", total=len(records))
        for r in records:
            rows.append(
                score_sampled(
                    r.data, scopes.of(r.data), references, options, sampler, line=r.line, error=r.error
                )
            )
            bar.advance(task)
    return rows


def _warn_without_edges(records: Sequence[Record]) -> None:
    """Say how many plans ``--execute pos`` gives a partial order they do not carry."""
    bare = sum(1 for r in records if r.data is not None and not r.data.get("edges"))
    if bare:
        warn(
            f"--execute pos: {plural(bare, 'plan')} {'carries' if bare == 1 else 'carry'} no resource-flow "
            "edges (a partial order); each "
            "runs by the edges its starts imply (as stress --execute pos does), not as soon as its "
            "dependencies allow"
        )


def _online_plugin(spec: str, pairs: Sequence[tuple[Workflow, Machine]]) -> PolicyFactory:
    """The online policy factory ``module:function`` names, each policy it builds checked to be one.

    It is tried once on the first of ``pairs``, so that a factory that is not one (it raises, or
    builds no policy) is one ``Error:`` before any record, not an invalid row for each.

    Raises
    ------
    PluginError
        When it cannot be loaded, or the first policy it builds cannot be.
    """
    from peakopt.solver.heuristics.plugins import built_policy, load_plugin  # here: the solver loads OR-Tools

    func = load_plugin(spec).func

    def factory(workflow: Workflow, machine: Machine | None) -> OnlinePolicy:
        return cast("OnlinePolicy", built_policy(spec, func, workflow, machine))

    for workflow, machine in pairs[:1]:
        factory(workflow, machine)
    return factory


@click.command("plan-score")
@click.option(
    "-t",
    "--truth",
    "truth_paths",
    multiple=True,
    required=True,
    metavar="PATH",
    help="The true workflows (repeatable).",
)
@read_options
@click.option(
    "-p",
    "--predictions",
    metavar="PREDICTIONS.jsonl|LOG.eval",
    required=True,
    help="JSON Lines of predicted dependency structures, or an Inspect .eval log.",
)
@click.option(
    "--scores",
    metavar="SCORES.jsonl",
    help="Per-record scores (peakopt score -o) to correlate edge F1 with cva.",
)
@grouping(PLAN_GROUP_KEYS)
@output_group
def plan_score_command(
    truth_paths: tuple[str, ...],
    read: ReadOptions,
    predictions: str,
    scores: str | None,
    by: tuple[str, ...],
    writing: OutputOptions,
) -> None:
    """Score predicted dependency structures: edge P/R/F1, GED, concurrency agreement.

    Each line of the predictions file is {"workflow", "source", and
    "dependencies" (step -> predecessors), "edges" ([from, to] pairs) or
    "response" (an LLM's raw answer)}. With --scores, prints the Pearson
    and Spearman correlation between edge F1 and cva per source.

    Example: peakopt plan-score --truth bundled:refund --predictions plans.jsonl --scores scores.jsonl
    """
    from peakopt.oracle.tables.aggregate import aggregate_plans, correlate
    from peakopt.oracle.tables.score_rows import score_prediction

    out = _claim(writing, [*truth_paths, predictions, scores])
    scopes = Scopes.read(truth_paths, read.fmt, read.cpu, read.keep_dummies)
    rows = [
        score_prediction(r.data, scopes.of(r.data), line=r.line, error=r.error)
        for r in answer_records(predictions, "plan")
    ]
    check_by(rows, by)
    _emit(rows, writing, out)
    tables = [plan_table(aggregate_plans(rows, by))]
    if scores:
        tables.append(correlation_table(correlate(rows, read_scores(scores))))
    show_tables(writing.table_format, tables)
    _count(rows, writing.output)
