"""What ``peakopt report`` reads: each input's rows and provenance, its suite, the floor and the split.

Each input (a results store, a scores file, an Inspect log) is read once into a
:class:`ReportInput`: its score rows, its :class:`~peakopt.campaign.provenance.Provenance`, and
where known the suite it answers and the references it was scored against — a log names both in
its task's metadata, a scores file has them from ``--suite`` and ``--reference``. With those, the
trivial answers are scored on the pairs the inputs answer (:mod:`peakopt.campaign.floor`: the
reference rows beside the leaderboard), and ``--split hard`` keeps the pairs none of them solves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from peakopt.cli.common import warn
from peakopt.cli.messages import plural
from peakopt.cli.score_files import load_references, read_scores, scope_pairs
from peakopt.cli.targets import Scopes
from peakopt.instances import InputError
from peakopt.models import PeakoptError

# The campaign (the floor, the stores, provenance), the logs, the oracle's tables, the models and
# rich are imported by the functions that use them, so that `report --help` imports no pydantic.
if TYPE_CHECKING:
    from rich.table import Table

    from peakopt.campaign.floor import Floor, Pair
    from peakopt.campaign.provenance import Provenance
    from peakopt.evals.logs import Log
    from peakopt.oracle import ScoreRow
    from peakopt.oracle.judge.references import Checked
    from peakopt.oracle.tables.leaderboard import Standing
    from peakopt.plots.cells import Cells


@dataclass(frozen=True)
class ReportInput:
    """One input of the report, read.

    Attributes
    ----------
    path
        As given.
    rows
        Its score rows.
    provenance
        What it says of its making.
    scopes, references
        The suite it answers and the references it was scored against, where known (a log's
        task names them; a scores file has the ``--suite`` and ``--reference`` inputs).
    log
        The Inspect log, for a log.
    """

    path: str
    rows: list[ScoreRow]
    provenance: Provenance
    scopes: Scopes | None = None
    references: Checked = field(default_factory=dict)
    log: Log | None = None


def read_input(path: str, strict: bool, drawn: tuple[Scopes | None, Checked]) -> ReportInput:
    """One input: a results store (opened read-only), a scores file, or an Inspect log.

    A scores file is what ``peakopt score -o`` writes; of an Inspect log of ``peakopt/schedule``,
    the rows its scorer kept are read. ``strict``: what would be a warning about a log
    (incomplete, errored samples) is an error. ``drawn``: the ``--suite`` and ``--reference``
    inputs, for a scores file. A file named like a store (``.sqlite``, ``.db``...) or starting
    with SQLite's header is read as a store only: a damaged one is an error, never read as JSON Lines.

    Raises
    ------
    InputError
        When the input cannot be read.
    """
    from peakopt.campaign.provenance import scores_provenance, store_provenance
    from peakopt.campaign.storage import is_store_path
    from peakopt.campaign.store import read_score_rows
    from peakopt.evals.logs import is_eval_log, log_provenance, read_score_log

    source = Path(path)
    if is_eval_log(source):

        def refuse(message: str) -> None:
            raise InputError(path, "", message.removeprefix(f"{path}: ") + " (--strict)")

        log, rows = read_score_log(source, refuse if strict else warn)
        return ReportInput(path, rows, log_provenance(log, rows), log=log)
    if not source.exists():
        raise InputError(path, "", "does not exist")
    if is_store_path(source):
        rows = read_score_rows(source)
        return ReportInput(path, rows, store_provenance(path, rows), *store_suite(path))
    rows = read_scores(path)
    scopes, references = drawn
    suites = scopes.files if scopes is not None else ()
    return ReportInput(path, rows, scores_provenance(path, rows, suites), scopes, references)


def store_suite(path: str) -> tuple[Scopes | None, Checked]:
    """The workflows and machines a store's results answer, as one suite, and their references.

    None when two of its workflows (or machines) share an id with different contents (stores
    of several suites): their pairs cannot be told apart by name, as rows name them.
    """
    from peakopt.campaign.store import Store
    from peakopt.models import Suite

    store = Store(path, read_only=True)
    try:
        answered = store.answered()
    finally:
        store.close()
    workflows = {w.id: w for w, _, _ in reversed(answered)}
    machines = {m.name: m for _, m, _ in reversed(answered)}
    if any(workflows[w.id] != w or machines[m.name] != m for w, m, _ in answered) or not workflows:
        return None, {}
    suite = Suite(
        workflows=tuple(workflows[k] for k in dict.fromkeys(w.id for w, _, _ in answered)),
        machines=tuple(machines[k] for k in dict.fromkeys(m.name for _, m, _ in answered)),
    )
    references: Checked = {(w.id, m.name): ref for w, m, ref in answered if ref is not None}
    return Scopes([(path, suite)]), references


def read_inputs(
    paths: Sequence[str], strict: bool, drawn: tuple[Scopes | None, Checked] = (None, {})
) -> list[ReportInput]:
    """Every input (:func:`read_input`); an Inspect log that cannot be used is skipped with a warning.

    Unless ``strict``: then it is an error, as any other input that cannot be read always is.
    When no input is left, the first log's error is raised.

    Raises
    ------
    InputError
        For an input that cannot be read (see above).
    """
    from peakopt.evals.logs import is_eval_log

    read: list[ReportInput] = []
    skipped: list[InputError] = []
    for path in paths:
        try:
            read.append(read_input(path, strict, drawn))
        except InputError as exc:
            if strict or not is_eval_log(Path(path)):
                raise
            skipped.append(exc)
    if not read:
        first = skipped[0]
        raise InputError(first.source, first.item, first.rule)
    for error in skipped:
        warn(f"skipped {error.source}: {error.rule}")
    return read


def with_task_suite(found: ReportInput, say: Callable[[str], None]) -> ReportInput:
    """A log's input with the suite and references its task names (said through ``say``).

    Unchanged when the log names no suite or it cannot be read any more (with a warning).
    """
    log = found.log
    if log is None or found.scopes is not None:
        return found
    suite, reference = log.metadata.get("suite"), log.metadata.get("reference")
    if not isinstance(suite, str):
        warn(f"{found.path}: the log names no suite: no worst cases drawn, no floor (give --suite)")
        return found
    try:
        scopes = Scopes.read([suite], None, "peak", False)
        references = load_references(reference, scope_pairs(scopes)) if isinstance(reference, str) else {}
    except PeakoptError as exc:
        warn(f"{found.path}: its task's suite {suite} cannot be read ({exc}): no worst cases drawn, no floor")
        return found
    say(f"{found.path}: its task's suite, {suite}, used for the floor and the worst cases")
    return replace(found, scopes=scopes, references=references)


@dataclass(frozen=True)
class Trivial:
    """The trivial answers scored on the pairs the inputs answer: the floor, its rows and standings."""

    floor: Floor
    rows: list[ScoreRow]
    standings: list[Standing]


def trivial_answers(inputs: Sequence[ReportInput]) -> Trivial | None:
    """The trivial answers (:data:`~peakopt.campaign.floor.TRIVIAL`) of every pair an input answers.

    Scored on each input's suite against its references (a pair answered by several inputs
    once); None when no input knows both.
    """
    from peakopt.campaign.floor import floor, floor_rows
    from peakopt.oracle.tables.leaderboard import by_pair, standings
    from peakopt.oracle.tables.pairs import question_keys

    rows: list[ScoreRow] = []
    references: Checked = {}
    done: set[Pair] = set()
    for found in inputs:
        if found.scopes is None or not found.references:
            continue  # without references, no answer is known to be optimal
        wanted = {(str(r.workflow), str(r.machine)) for r in found.rows} - done
        for suite in found.scopes.suites:
            pairs = [(w, m) for w in suite.workflows for m in suite.machines if (w.id, m.name) in wanted]
            rows += floor_rows(suite, found.references, pairs)
            done |= {(w.id, m.name) for w, m in pairs}
        references |= found.references
    if not done:
        return None
    # their standings only: how the trivial answers compare with one another is not asked
    ranked = standings(by_pair(rows, lambda row: row.efficiency, question_keys(rows)))
    return Trivial(floor(rows, references, sorted(done)), rows, ranked)


def split_rows(inputs: Sequence[ReportInput], trivial: Trivial | None, split: str) -> list[ReportInput]:
    """The inputs with only the rows of the ``split`` (``all``: unchanged; ``hard``: the hard pairs).

    Raises
    ------
    PeakoptError
        For ``hard``, when an input does not know its suite (the split is the suite's).
    """
    if split == "all":
        return list(inputs)
    unknown = [found.path for found in inputs if found.scopes is None]
    if unknown or trivial is None:
        where = unknown[0] if unknown else inputs[0].path
        raise InputError(
            where,
            "",
            "--split hard needs the suite it answers and its references: give --suite and "
            "--reference for a scores file",
        )
    hard = trivial.floor.hard
    return [
        replace(found, rows=[r for r in found.rows if (str(r.workflow), str(r.machine)) in hard])
        for found in inputs
    ]


def floor_cells(trivial: Trivial) -> list[dict[str, str]]:
    """One line of text cells per trivial answer: what it is, its efficiency, where it is optimal and safe."""
    from peakopt.campaign.floor import SOURCE, TRIVIAL
    from peakopt.plots.columns import number, with_interval

    standings = {s.source: s for s in trivial.standings}
    cells = []
    for line in trivial.floor.lines:
        standing = standings.get(SOURCE + line.answer)
        efficiency = with_interval(standing.mean, standing.interval, number) if standing else "-"
        cells.append(
            {
                "answer": SOURCE + line.answer,
                "what": TRIVIAL[line.answer],
                "pairs": str(line.pairs),
                "efficiency": efficiency,
                "optimal": f"{line.optimal} ({line.share:.1%})",
                "safe": str(line.safe),
            }
        )
    return cells


def floor_caption(trivial: Trivial) -> str:
    """What the floor's table shows, in one sentence."""
    found = trivial.floor
    return (
        f"The trivial answers on the {plural(found.pairs, 'pair')} the inputs answer, "
        "scored by the same oracle: "
        f"{found.trivial} solved optimally by one of them, {len(found.hard)} in the hard split "
        "(--split hard)."
    )


def cells_table(title: str, cells: Cells) -> Table:
    """A terminal table of text cells, their caption under it."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", caption=cells.caption, caption_justify="left")
    for header in cells.headers:
        table.add_column(header, overflow="fold")
    for line in cells.lines:
        table.add_row(*(line.get(header, "") for header in cells.headers))
    return table


def fields_table(title: str, cells: Cells) -> Table:
    """A terminal table of text cells turned on its side: a line per header, a column per line.

    For a few long lines of many fields (the inputs' provenance): it fits a terminal's width.
    """
    from rich.table import Table

    table = Table(title=title, title_justify="left", caption=cells.caption, caption_justify="left")
    table.add_column("field", no_wrap=True)
    for place, _ in enumerate(cells.lines, start=1):
        table.add_column("value" if len(cells.lines) == 1 else f"input {place}", overflow="fold")
    for header in cells.headers:
        table.add_row(header, *(line.get(header, "") for line in cells.lines))
    return table
