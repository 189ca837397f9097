"""The ``peakopt`` command: a group that imports each command only when it runs.

``peakopt --help``, ``--version`` and shell completion of the command names
read :data:`COMMANDS` and import no command module, so they start at once; a
command's module (and the libraries it needs: OR-Tools, matplotlib, Dask...)
is imported when that command is invoked, or when its own help is asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from peakopt.cli.group import Group

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class Entry(NamedTuple):
    """Where a command lives (``module:attribute``) and the sentence ``peakopt --help`` shows for it."""

    target: str
    short_help: str


#: Every command, in the order of a user's loop (inputs, suites, schedules, scores), with its short help:
#: the first sentence of its docstring (a test checks that they agree).
COMMANDS: dict[str, Entry] = {
    "validate": Entry(
        "peakopt.cli.inputs:validate", "Check input files: one line per file, OK with counts or the error."
    ),
    "convert": Entry(
        "peakopt.cli.inputs:convert",
        "Convert an input file to peakopt JSON, JSON Lines or a PeakBench context.",
    ),
    "schema": Entry(
        "peakopt.cli.inputs:schema", "Print the JSON Schema of a peakopt document (default: workflow)."
    ),
    "generate": Entry(
        "peakopt.cli.generate:generate",
        "Generate a synthetic PeakBench-like suite, or large stress instances.",
    ),
    "prompt": Entry(
        "peakopt.cli.generate:prompt",
        "Write LLM prompts: scheduling (per workflow × machine) or planning (per workflow).",
    ),
    "solve": Entry(
        "peakopt.cli.solve:solve_command",
        "Optimal (or bounded) reference schedules for every workflow × machine of the inputs.",
    ),
    "schedule": Entry(
        "peakopt.cli.schedule:schedule_command", "Schedule every workflow × machine × method with heuristics."
    ),
    "score": Entry(
        "peakopt.cli.score:score",
        "Score schedules or raw LLM responses against the oracle (and references).",
    ),
    "plan-score": Entry(
        "peakopt.cli.score:plan_score_command",
        "Score predicted dependency structures: edge P/R/F1, GED, concurrency agreement.",
    ),
    "stress": Entry(
        "peakopt.cli.stress:stress",
        "Run heuristics against the optimum on every workflow × machine of the suites.",
    ),
    "report": Entry(
        "peakopt.cli.report:report",
        "Per-method statistics of stress runs (SQLite stores), scores or Inspect logs, and a leaderboard.",
    ),
    "profile": Entry(
        "peakopt.cli.profile:profile",
        "Measure a real command's run: its duration, CPU and memory over time, as a task.",
    ),
    "run": Entry(
        "peakopt.cli.run:run_command",
        "Run a workflow's shell commands on this machine under a machine's capacities.",
    ),
    "serve": Entry(
        "peakopt.cli.serve:serve",
        "Serve the governor over HTTP: admit, wait, heartbeat, release, status, trace, metrics.",
    ),
    "plot": Entry(
        "peakopt.cli.plot:plot",
        "Draw schedules of one workflow side by side: Gantt chart above the load on each resource.",
    ),
}


def short_help(name: str, limit: int = 45) -> str:
    """The command's short help, shortened to ``limit`` characters as click shortens a docstring."""
    # a bare command with that sentence as its help: click's own shortening, nothing imported
    return click.Command(name, help=COMMANDS[name].short_help).get_short_help_str(limit)


def load_command(name: str) -> click.Command:
    """Import the command ``name`` of :data:`COMMANDS` (KeyError when there is none)."""
    module, _, attribute = COMMANDS[name].target.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{COMMANDS[name].target} is not a click command")
    return command


class LazyGroup(Group):
    """A :class:`~peakopt.cli.group.Group` whose commands are imported when they are run.

    click's lazy-group pattern: :meth:`get_command` imports one command's
    module; the listing in ``--help`` and the completion of command names use
    the short help kept in :data:`COMMANDS` instead of importing them all.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The command names, in :data:`COMMANDS`' order."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, imported now; None for a name that is not one."""
        return load_command(cmd_name) if cmd_name in COMMANDS else None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with the command names as the suggestions for a mistyped one."""
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-") and not ctx.resilient_parsing:
            # click suggests from self.commands, which a lazy group leaves empty
            raise click.NoSuchCommand(name, possibilities=list(COMMANDS), ctx=ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The Commands section of ``peakopt --help``, from :data:`COMMANDS` (nothing imported)."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)  # click's own room
        with formatter.section("Commands"):
            formatter.write_dl([(name, short_help(name, limit)) for name in COMMANDS])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Command names (with their short help, nothing imported), then the group's options."""
        from click.shell_completion import CompletionItem

        found = [
            CompletionItem(name, help=short_help(name)) for name in COMMANDS if name.startswith(incomplete)
        ]
        # the options of the group itself: click.Command's completion, past Group's (which imports)
        return found + click.Command.shell_complete(self, ctx, incomplete)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
# package_name: the version is read from the package's metadata only when --version is given
@click.version_option(package_name="peakopt", prog_name="peakopt")
def cli() -> None:
    """Optimal schedules for agent tool workflows under resource limits.

    peakopt also scores any other schedule against the optimum.

    Inputs are peakopt JSON (workflow or suite), JSON Lines, PSPLIB .sm,
    Patterson .rcp, PeakBench contexts, or bundled:NAME (e.g. bundled:refund).
    """


def main(*args: Any, **kwargs: Any) -> None:
    """Entry point of the console script: Ctrl-C and SIGTERM stop a run cleanly."""
    from peakopt.cli.group import install

    install()
    cli(*args, **kwargs)
