"""``peakopt stress``'s own option groups: the campaign (store, references, where, resuming) and the cases.

``stress`` takes its options as a few frozen dataclasses (:func:`peakopt.cli.options.grouped`),
not thirty-one parameters: how the inputs are read (:class:`~peakopt.cli.common.ReadOptions`),
what is solved (:class:`~peakopt.cli.cluster.SolveOptions`), the campaign
(:class:`CampaignOptions`, with :class:`~peakopt.cli.cluster.ExecutorOptions` inside), the
summary (:class:`~peakopt.cli.summaries.SummaryOptions`), the worst cases and the adversarial
search (:class:`CaseOptions`) and the noise (:class:`~peakopt.cli.stress_noise.NoiseOptions`).
The options themselves, their order in ``--help``, defaults and help texts are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from peakopt.campaign.ranges import COUNT
from peakopt.cli.cluster import ExecutorOptions, executors_options
from peakopt.cli.options import grouped, method_list, seconds_option, seed_option


@dataclass(frozen=True)
class CampaignOptions:
    """The run: its store, reused references, method limit and seed, where it runs, what is run again."""

    db: str
    reference: str | None
    method_limit: float
    seed: int
    executors: ExecutorOptions
    chunk: int | None
    fresh: bool
    redo: tuple[str, ...]


@dataclass(frozen=True)
class CaseOptions:
    """What is exported beside the rows: each method's worst cases, and an adversarial search."""

    worst: int | None
    worst_dir: str
    search: int | None


#: ``--db`` ... ``--redo``, reaching the command as ``campaign``, one :class:`CampaignOptions`.
campaign_options = grouped(
    "campaign",
    CampaignOptions,
    click.option(
        "--db",
        required=True,
        metavar="RESULTS.sqlite",
        help="The results store (created if missing; a file that is not one is refused, untouched).",
    ),
    click.option(
        "-r",
        "--reference",
        metavar="REFS.jsonl",
        help="Reference results (peakopt solve -o) to reuse instead of solving.",
    ),
    seconds_option(
        "--method-limit", 60.0, "Seconds one method may take on one instance; then its row is an error."
    ),
    seed_option("Seed of the solver, methods and search."),
    executors_options,
    click.option("--chunk", type=COUNT, help="Instances per task [default: automatic]."),
    click.option("--fresh", is_flag=True, help="Drop everything in the store first (a store only)."),
    click.option(
        "--redo",
        multiple=True,
        callback=method_list,
        metavar="METHOD",
        help="Run this method's rows again even where the store has them (repeatable; "
        "the other methods' rows and the optima are kept).",
    ),
)

#: ``--worst``, ``--worst-dir`` and ``--search``, reaching the command as ``cases``, one :class:`CaseOptions`.
case_options = grouped(
    "cases",
    CaseOptions,
    click.option("--worst", type=COUNT, metavar="K", help="Export each method's K worst instances."),
    click.option(
        "--worst-dir",
        metavar="DIR",
        default="worst",
        show_default=True,
        help="Where --worst and --search write (created if missing, in an existing folder); "
        "each case file is replaced in one step.",
    ),
    click.option("--search", type=COUNT, metavar="N", help="Adversarial search: judge N mutants."),
)
