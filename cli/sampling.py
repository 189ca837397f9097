"""``score``'s execution and Monte Carlo options: --execute, --samples, --noise, --noise-demand, --seed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from peakopt.campaign.ranges import COUNT, SECONDS, Finite
from peakopt.cli.common import warn
from peakopt.cli.options import grouped, seed_option
from peakopt.oracle.answers.names import MODES
from peakopt.oracle.uncertain.names import EXECUTIONS

F = TypeVar("F", bound=Callable[..., Any])

#: ``--replay``'s modes as executions (the deprecated alias).
REPLAY_EXECUTIONS = {"literal": "literal", "runtime": "enforced"}
#: A noise's relative half-width: [0, 1).
NOISE = Finite(0, 1, max_open=True)


#: Seconds of CP-SAT search per scenario for the perfect-information bound, by default.
BOUND_LIMIT = 1.0
#: Seconds of CP-SAT search for a trace's hindsight optimum (one per trace, not per scenario).
RUN_LIMIT = 10.0


def bound_limit_option(func: F) -> F:
    """``--bound-limit``: the search per scenario for its own optimum (``score`` and ``stress``)."""
    return click.option(
        "--bound-limit",
        type=SECONDS,
        metavar="SECONDS",
        help="With sampled scenarios, seconds of CP-SAT search per scenario for its own optimum "
        f"(the perfect-information bound) [default: {BOUND_LIMIT:g}]; with traces (score), for "
        f"the optimum of each trace's actual durations [default: {RUN_LIMIT:g}].",
    )(func)


class ExecutionType(click.ParamType[str]):
    """An execution name, or ``module:function`` naming an online policy factory."""

    name = "POLICY"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """The value, when it is an execution or looks like ``module:function``."""
        text = str(value)
        if text in EXECUTIONS or (":" in text and all(text.partition(":")[::2])):
            return text
        self.fail(f"{text!r} is neither {', '.join(EXECUTIONS)} nor module:function", param, ctx)


def sampling_options(func: F) -> F:
    """The options of :func:`sampling`, in the order ``--help`` shows them."""
    func = bound_limit_option(func)
    func = seed_option("Seed of the sampled scenarios (with --samples).")(func)
    func = click.option(
        "--noise-demand",
        type=NOISE,
        help="With --samples: every task's demands uniform within ±Y of nominal (one factor per task), "
        "instead of the tasks' own varies.",
    )(func)
    func = click.option(
        "--noise",
        type=NOISE,
        help="With --samples: every duration uniform within ±X of nominal (PeakBench's protocol), "
        "instead of the tasks' own varies.",
    )(func)
    func = click.option(
        "--samples",
        type=COUNT,
        help="Also execute each plan over N sampled scenarios (Monte Carlo) and report its "
        "probabilities and expectations.",
    )(func)
    func = click.option("--replay", type=click.Choice(MODES), hidden=True, help="Deprecated: use --execute.")(
        func
    )
    return click.option(
        "--execute",
        type=ExecutionType(),
        default="literal",
        show_default=True,
        help="How a plan runs: literal (its starts as a timetable), enforced (not before its "
        "predecessors end), order (its order as priorities under resource admission), pos (its "
        "dependencies plus resource-flow edges), or module:function (an online policy factory).",
    )(func)


@dataclass(frozen=True)
class SamplingOptions:
    """The values of :func:`sampling_options`: how a plan runs, and over which scenarios."""

    execute: str
    replay: str | None
    samples: int | None
    noise: float | None
    noise_demand: float | None
    seed: int
    bound_limit: float | None


#: :func:`sampling_options`, reaching the command as ``sample``, one :class:`SamplingOptions`.
sampling_group = grouped("sample", SamplingOptions, sampling_options)


def execution(ctx: click.Context, execute: str, replay: str | None) -> str:
    """``--execute``, or what the deprecated ``--replay`` means (a usage error when they disagree)."""
    if replay is None:
        return execute
    meant = REPLAY_EXECUTIONS[replay]
    given = ctx.get_parameter_source("execute") is not click.core.ParameterSource.DEFAULT
    if given and execute != meant:
        raise click.UsageError(
            f"--replay {replay} means --execute {meant}, not --execute {execute}; give one"
        )
    warn(f"--replay is deprecated: --replay {replay} is --execute {meant}")
    return meant


def check_sampling(ctx: click.Context, samples: int | None, *, also_bounds: bool = False) -> None:
    """Refuse --noise, --noise-demand, --seed or --bound-limit without --samples: they change nothing.

    ``also_bounds``: --seed and --bound-limit have another use (``score``'s traces are solved).
    """
    if samples is not None:
        return
    for name in (
        ("noise", "noise_demand") if also_bounds else ("noise", "noise_demand", "seed", "bound_limit")
    ):
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
            raise click.UsageError(f"--{name.replace('_', '-')} needs --samples")
