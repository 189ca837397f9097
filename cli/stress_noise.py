"""``peakopt stress --samples/--noise``: the options, and the bounds phase before the Monte Carlo rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.campaign.ranges import COUNT
from peakopt.cli.cluster import progress_bar
from peakopt.cli.messages import plural
from peakopt.cli.options import grouped
from peakopt.cli.sampling import BOUND_LIMIT, NOISE, bound_limit_option
from peakopt.oracle.uncertain.names import EXECUTIONS, LITERATURE_DISTRIBUTIONS

# The campaign and the oracle's models are imported by the functions that use them, so that
# `stress --help` (which declares these options) imports no pydantic.
if TYPE_CHECKING:
    from rich.console import Console

    from peakopt.campaign.executors import Executor
    from peakopt.campaign.noise_run import NoiseRun
    from peakopt.campaign.store import Store
    from peakopt.campaign.stress import Item, Settings

F = TypeVar("F", bound=Callable[..., Any])

#: Scenarios per workflow when --noise or --noise-demand is given without --samples.
STRESS_SAMPLES = 100


def noise_options(command: F) -> F:
    """The noise options (``--noise``, ``--distribution``, ``--samples``, ``--execute``, …)."""
    options = [
        click.option(
            "--noise",
            type=NOISE,
            metavar="X",
            help="Judge every method under noise: durations uniform within ±X (0.25 is ±25 %) "
            "of their nominal values (PeakBench's protocol), instead of the tasks' own varies.",
        ),
        click.option(
            "--noise-demand",
            type=NOISE,
            metavar="Y",
            help="Under noise, every task's demands scaled by one factor uniform within 1 ± Y "
            "(instead of the tasks' own varies).",
        ),
        click.option(
            "--distribution",
            type=click.Choice(LITERATURE_DISTRIBUTIONS),
            help="Judge every method under noise: every duration drawn from one of the stochastic "
            "RCPSP literature's five distributions, its nominal duration as mean, demands nominal "
            "(U1 needs durations of 0 or at least 1, B1 above 2/3, in the file's time unit); "
            "not with --noise or --noise-demand.",
        ),
        click.option(
            "--samples",
            type=COUNT,
            metavar="N",
            help="Judge every method on N seeded scenarios per workflow, the same for every method "
            "(alone: drawn from the tasks' own varies) "
            f"[default with --noise, --noise-demand or --distribution: {STRESS_SAMPLES}].",
        ),
        click.option(
            "--execute",
            type=click.Choice(EXECUTIONS),
            help="Under noise, execute each method's nominal plan by this policy instead of "
            "running its online form; adds the row 'optimum' (the optimum, executed so).",
        ),
    ]
    command = bound_limit_option(command)
    for option in reversed(options):
        command = option(command)
    return command


def noise_run(
    noise: float | None,
    demand: float | None,
    samples: int | None,
    execute: str | None,
    bound_limit: float | None,
    distribution: str | None = None,
) -> NoiseRun | None:
    """The settings of a campaign under noise; None without any of the noise options.

    ``--samples`` alone draws from the tasks' own ``varies`` (as ``peakopt score --samples``);
    ``--noise``/``--noise-demand`` apply PeakBench's uniform protocol instead, to every task, and
    ``--distribution`` one of the literature's.

    Raises
    ------
    click.UsageError
        When an option that needs sampling is given without it, or two protocols are given.
    """
    from peakopt.campaign.noise_run import NoiseRun
    from peakopt.oracle.uncertain.scenarios import Noise

    if noise is None and demand is None and samples is None and distribution is None:
        given = [name for name, value in (("--execute", execute), ("--bound-limit", bound_limit)) if value]
        if given:
            raise click.UsageError(
                f"{', '.join(given)} needs --samples, --noise, --noise-demand or --distribution"
            )
        return None
    if distribution is not None and (noise is not None or demand is not None):
        raise click.UsageError(
            "--distribution draws durations by another protocol: not with --noise or --noise-demand"
        )
    assert execute is None or execute in EXECUTIONS
    assert distribution is None or distribution in LITERATURE_DISTRIBUTIONS
    return NoiseRun(
        None if noise is None and demand is None else Noise(noise or 0.0, demand or 0.0),
        samples or STRESS_SAMPLES,
        execute,
        BOUND_LIMIT if bound_limit is None else bound_limit,
        distribution,
    )


@dataclass(frozen=True)
class NoiseOptions:
    """The values of :func:`noise_options`, read into a campaign's settings by :meth:`run`."""

    noise: float | None
    noise_demand: float | None
    distribution: str | None
    samples: int | None
    execute: str | None
    bound_limit: float | None

    def run(self) -> NoiseRun | None:
        """:func:`noise_run` of these values (a usage error when one needs sampling without it)."""
        return noise_run(
            self.noise, self.noise_demand, self.samples, self.execute, self.bound_limit, self.distribution
        )


#: :func:`noise_options`, reaching the command as ``noise``, one :class:`NoiseOptions`.
noise_group = grouped("noise", NoiseOptions, noise_options)


def noisy_rows(run: NoiseRun) -> tuple[str, ...]:
    """The reference rows beside the methods: the robust reference, and the optimum when executed."""
    from peakopt.campaign.noise_run import OPTIMUM_ROW, ROBUST_ROW

    return (ROBUST_ROW,) if run.execute is None else (OPTIMUM_ROW, ROBUST_ROW)


def bound_items(
    executor: Executor, items: Sequence[Item], store: Store, settings: Settings, console: Console
) -> list[Item]:
    """The items with their scenarios' perfect-information bounds, solved with a progress bar."""
    from peakopt.campaign.stress_noise import attach_bounds

    assert settings.noise is not None
    with progress_bar(console, "bounds", "scenarios") as bar:
        task = bar.add_task(executor.where.describe(), total=None)

        def show(done: int, total: int) -> None:
            bar.update(task, total=total, advance=done)

        found, bounds = attach_bounds(items, store, executor, settings.noise, settings.seed, show)
    solved = sum(bounds.solved.values())
    if solved:
        shares = ", ".join(f"{100 * bounds.share(s):.1f}% {s}" for s in ("shortcut", "cliques", "cpsat"))
        console.print(
            f"bounds: {plural(solved, 'scenario')} solved ({shares}), {bounds.cached} from the store"
        )
    return found
