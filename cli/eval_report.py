"""``report --table-format eval-report``: an eval README's Evaluation Report section, from Inspect logs.

inspect_evals' READMEs end with an *Evaluation Report*: per run the model, the figures, the date,
and the exact command that made them. This section is written from the logs themselves, never
typed: per log its model, solver, split, samples, mean efficiency with its 95 % interval (the
leaderboard's: per pair, epochs averaged, resampled by pair), safe and valid rates and date, in
rank order; then each log's ``inspect eval`` command as Inspect recorded its arguments
(:func:`~peakopt.evals.command_line.inspect_command`), and the code that judged them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from peakopt.cli.exports import TABLE_FORMATS, markdown_text
from peakopt.cli.messages import plural
from peakopt.models import PeakoptError

if TYPE_CHECKING:
    from peakopt.cli.report_inputs import ReportInput

F = TypeVar("F", bound=Callable[..., Any])

#: ``report``'s one more ``--table-format``: the Evaluation Report section.
EVAL_REPORT = "eval-report"

#: The section's heading, as inspect_evals' READMEs name it.
HEADING = "## Evaluation Report"
#: What the efficiency column holds.
EFFICIENCY_NOTE = (
    "Efficiency: the proven optimal makespan over the answer's for a safe answer, 0 for an unsafe or "
    "invalid one; per pair, epochs averaged, with its 95 % bootstrap interval (seeded, resampled by pair)."
)


def report_format_option(func: F) -> F:
    """``report``'s ``--table-format``: the exports of every table command, and ``eval-report``."""
    return click.option(
        "--table-format",
        "table_format",
        type=click.Choice((*TABLE_FORMATS, EVAL_REPORT)),
        help="Print the tables on stdout as Markdown (md) or LaTeX tabulars (latex), the terminal "
        "tables' columns, instead of on stderr; latex-paper: the summary table alone, for a paper "
        "(booktabs; the headline columns unless --wide or --columns); eval-report: Inspect logs' "
        "Evaluation Report section for an eval's README (Markdown: per log its model, solver, split, "
        "samples, efficiency, safe and valid rates and date, then the inspect eval commands).",
    )(func)


def check_logs(inputs: Sequence[ReportInput]) -> None:
    """Refuse an input that is not an Inspect log: only a log records the command that made it.

    Raises
    ------
    PeakoptError
        Naming the first input that is not a log.
    """
    for found in inputs:
        if found.log is None:
            raise PeakoptError(
                f"{found.path}: is a {found.provenance.kind}, not an Inspect log; --table-format "
                "eval-report reads Inspect logs only (it names the command that made each)"
            )


def eval_report(inputs: Sequence[ReportInput], facts: Mapping[str, str]) -> str:
    """The Evaluation Report section (Markdown) of Inspect logs: per split, best efficiency first.

    Parameters
    ----------
    inputs
        The logs, read (:func:`check_logs` first).
    facts
        The report's own provenance (:func:`~peakopt.campaign.provenance.report_facts`).
    """
    from peakopt.campaign.summaries import summaries
    from peakopt.oracle.tables.leaderboard import board
    from peakopt.plots.columns import number, percent, with_interval

    lines = []
    for found in inputs:
        log = found.log
        assert log is not None  # check_logs
        standing = next(iter(board(found.rows).standings), None)
        [summary] = summaries(found.rows, ()) if found.rows else [None]
        efficiency = "-" if standing is None else with_interval(standing.mean, standing.interval, number)
        cells = [
            log.model,
            log.solver or "the task's (the model answers)",
            ", ".join(found.provenance.splits) or "all",
            str(found.provenance.pairs),
            str(log.epochs),
            efficiency,
            percent(None if summary is None else summary.safe_rate),
            percent(None if summary is None else 1 - summary.invalid / max(1, summary.records)),
            (log.created or "not recorded")[:10],
        ]
        lines.append(((cells[2], -1.0 if standing is None else -standing.mean), cells, log.command))
    # per split, best first; stable: equal efficiencies keep the inputs' order
    lines.sort(key=lambda line: line[0])
    header = ["Model", "Solver", "Split", "Samples", "Epochs", "Efficiency", "Safe", "Valid", "Date"]
    table = ["| " + " | ".join(header) + " |", "|" + "|".join([":---"] * 3 + ["---:"] * 5 + [":---"]) + "|"]
    table += ["| " + " | ".join(markdown_text(cell) for cell in cells) + " |" for _, cells, _ in lines]
    commands = [command for _, _, command in lines]
    judged = (
        f"Judged by peakopt {facts['peakopt']} (oracle {facts['oracle']}) on {facts['suites']}; "
        f"section made {facts['made']} by `peakopt report --table-format eval-report` from "
        f"{plural(len(inputs), 'log')}."
    )
    return "\n".join(
        [HEADING, "", *table, "", EFFICIENCY_NOTE, "", "```bash", *commands, "```", "", judged, ""]
    )
