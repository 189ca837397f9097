"""Write the tables of docs/paper-tables.md: PeakBench's baseline tables, reproduced with peakopt.

One run regenerates every table of the page from nothing: a stress campaign of the baselines on
``bundled:default`` (the library behind ``peakopt stress``: each pair's optimum solved once, each
method's schedule scored by the oracle), the proven optimum scored as an answer beside them
(:func:`peakopt.oracle.score_record`), and the context ablation's counterparts — a heuristic that
decides with what each prompt setting tells a model (:func:`peakopt.instances.contexts.shown_machine`),
judged on the real machine. The tables go into the page between its markers
(``<!-- paper-tables: NAME -->`` ... ``<!-- /paper-tables: NAME -->``); the text around them is
left alone.

    python docs/scripts/paper_tables.py            # rewrite the page's tables (about 30 s)
    python docs/scripts/paper_tables.py --check    # exit 1, writing nothing, when they differ
    python docs/scripts/paper_tables.py --workflows 12 --print   # a sub-sample, to stdout

Before anything is written the figures are checked against the oracle's contract: every optimum
proven, the optimum's rows at gap 0 and efficiency 1, no efficiency above 1, no safe schedule
shorter than the optimum (tests/docs/test_docs_paper_tables.py runs the same checks and ``--check``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from peakopt.campaign.executors import Where, open_executor
from peakopt.campaign.floor import every_pair, hard_pairs
from peakopt.campaign.references import StoreReferences
from peakopt.campaign.store import Store
from peakopt.campaign.stress import Pair, Settings, auto_chunk, backlog, run_campaign
from peakopt.instances import load
from peakopt.instances.contexts import SETTING_CONTEXTS, Setting, shown_machine
from peakopt.models import SolveResult, Suite
from peakopt.oracle import ScoreRow, aggregate, score_record
from peakopt.oracle.tables.aggregate import ScoreSummary
from peakopt.solver.heuristics import run

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "paper-tables.md"
SUITE = "bundled:default"
#: PeakBench's baselines as peakopt names them (see benchmarks/test_calibration.py), then peakopt's.
PEAKBENCH_METHODS = ("asap", "serial", "best-rule")
PEAKOPT_METHODS = ("cap:2", "admission", "fbi:best-rule")
METHODS = (*PEAKBENCH_METHODS, *PEAKOPT_METHODS)
#: The row of the proven optimum (``peakopt solve``), scored as an answer.
OPTIMUM = "optimum"
TIERS = ("easy", "medium", "hard")
PROFILES = ("small", "medium", "large")
#: The settings of campaign and solves (``peakopt stress --time-limit 10 --seed 0``).
SETTINGS = Settings(time_limit=10.0, seed=0)
#: Oracle tolerance of the checks (the oracle sums starts and durations in floating point).
TOLERANCE = 1e-9


class Counterpart(NamedTuple):
    """The baseline that decides with what one prompt setting gives (PeakBench's Table 9).

    Attributes
    ----------
    method
        The heuristic, run on the machine as the setting shows it (:func:`shown_machine`).
    why
        What it does with the setting's information, for the page.
    """

    method: str
    why: str


#: Each prompt setting's counterpart among the baselines (see the page for what has none).
COUNTERPARTS: dict[str, Counterpart] = {
    "rasc": Counterpart("best-rule", "plans with every figure: durations, demands, capacities"),
    "durations": Counterpart("asap", "durations but no resource figure: each call when its inputs are ready"),
    "cpu": Counterpart("admission", "online, no durations needed: admits a ready call when its CPU fits"),
    "memory": Counterpart("admission", "online: admits a ready call when its memory fits"),
    "cpu-memory": Counterpart("admission", "online: admits a ready call when its CPU and memory fit"),
    "no-profile": Counterpart("asap", "nothing measured: each call when its inputs are ready"),
}


def bundled(workflows: int | None = None) -> Suite:
    """The bundled suite, or ``workflows`` of its workflows spread evenly over it (every tier)."""
    suite = load(SUITE)
    if workflows is None or workflows >= len(suite.workflows):
        return suite
    every = suite.workflows
    chosen = tuple(every[i * len(every) // workflows] for i in range(workflows))
    return suite.model_copy(update={"workflows": chosen})


References = dict[tuple[str, str | None], SolveResult]


def campaign(suite: Suite, db: Path, jobs: int) -> tuple[list[ScoreRow], References]:
    """The baselines' rows (what ``peakopt stress -m ...`` writes) and every pair's reference."""
    pairs = [Pair(w, tuple(suite.machines)) for w in suite.workflows]
    store = Store(db)
    try:
        todo = backlog(pairs, METHODS, SETTINGS, store)
        with open_executor(Where(jobs=jobs)) as executor:
            size = auto_chunk(len(todo.items), executor.slots)
            for _ in run_campaign(executor, todo.items, store, chunk=size):
                pass
        rows = store.score_rows(todo.keys)
        stored = StoreReferences(store)
        references: References = {}
        for workflow in suite.workflows:
            for machine in suite.machines:
                found = stored.get(workflow, machine)
                if found is not None:
                    references[workflow.id, machine.name] = found
    finally:
        store.close()
    return rows, references


def optimum_rows(suite: Suite, references: References) -> list[ScoreRow]:
    """Each pair's proven optimum scored as an answer (``peakopt score`` of ``peakopt solve``'s schedules)."""
    rows = []
    for (workflow, machine), reference in references.items():
        if reference.schedule is not None:
            record = {"workflow": workflow, "machine": machine, "source": OPTIMUM}
            rows.append(score_record(record | {"starts": reference.schedule.starts}, suite, references))
    return rows


def ablation_rows(suite: Suite, references: References) -> list[ScoreRow]:
    """Each setting's counterpart, deciding on the machine as the setting shows it, judged on the real one."""
    rows = []
    for name, counterpart in COUNTERPARTS.items():
        for workflow in suite.workflows:
            for machine in suite.machines:
                shown = shown_machine(machine, name)
                schedule = run(workflow, shown, counterpart.method, seed=SETTINGS.seed)
                record = {"workflow": workflow.id, "machine": machine.name, "source": counterpart.method}
                record |= {"setting": name, "starts": dict(schedule.starts)}
                rows.append(score_record(record, suite, references))
    return rows


def check(rows: Sequence[ScoreRow], references: References) -> list[str]:
    """What in the figures breaks the oracle's contract (empty: nothing); see the module docstring."""
    unproven = {pair: r.status for pair, r in references.items() if r.status != "optimal"}
    problems = [f"{w} on {m}: reference {status}" for (w, m), status in unproven.items()]
    for row in rows:
        where = f"{row.source} ({row.setting or 'stress'}) on {row.workflow}/{row.machine}"
        if row.efficiency is not None and row.efficiency > 1 + TOLERANCE:
            problems.append(f"{where}: efficiency {row.efficiency} above 1")
        if row.valid and row.safe and row.gap is not None and row.gap < -TOLERANCE:
            problems.append(f"{where}: safe and {-row.gap:.3%} shorter than the optimum")
        if row.source == OPTIMUM and not (row.safe and abs(row.gap or 0.0) <= TOLERANCE):
            problems.append(f"{where}: the optimum is not safe at gap 0 (gap {row.gap})")
        if row.source == OPTIMUM and abs((row.efficiency or 0.0) - 1) > TOLERANCE:
            problems.append(f"{where}: the optimum's efficiency is {row.efficiency}")
    return problems


def _number(value: float | None, digits: int, scale: float = 1.0) -> str:
    # + 0.0 turns the -0.0 of a rounding error into 0.0
    return "-" if value is None else f"{round(scale * value, digits) + 0.0:.{digits}f}"


def _efficiency(summary: ScoreSummary) -> str:
    interval = summary.intervals.get("efficiency")
    shown = _number(summary.efficiency, 3)
    if interval is None or summary.efficiency is None:
        return shown
    return f"{shown} [{_number(interval.low, 3)}, {_number(interval.high, 3)}]"


#: The figures of every table: (column, how a summary gives it).
FIGURES: tuple[tuple[str, Callable[[ScoreSummary], str]], ...] = (
    ("SL (s)", lambda s: _number(s.mean_makespan, 2)),
    ("CVA", lambda s: _number(s.mean_cva, 3)),
    ("strict MRU", lambda s: _number(s.strict_mru, 3)),
    ("safe (%)", lambda s: _number(s.safe_rate, 1, 100)),
    ("gap to OPT (%)", lambda s: _number(None if s.gap is None else s.gap.mean, 2, 100)),
    ("efficiency", _efficiency),
)


def _lines(header: Sequence[str], body: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def _summaries(rows: Sequence[ScoreRow], by: Sequence[str]) -> dict[tuple[str | None, ...], ScoreSummary]:
    return {tuple(s.group[k] for k in by): s for s in aggregate(rows, by, intervals=True)}


def split_table(rows: Sequence[ScoreRow], field: str, values: Sequence[str]) -> str:
    """Per value of ``field`` (tier or machine) and then overall: one line per method and the optimum."""
    split, overall = _summaries(rows, ("source", field)), _summaries(rows, ("source",))
    body = []
    for value in (*values, "all"):
        for method in (*METHODS, OPTIMUM):
            summary = overall.get((method,)) if value == "all" else split.get((method, value))
            if summary is not None:
                body.append([value, method, *(figure(summary) for _, figure in FIGURES)])
    return _lines([field, "method", *(name for name, _ in FIGURES)], body)


def hard_table(rows: Sequence[ScoreRow], hard: frozenset[tuple[str, str]]) -> str:
    """Every method on all pairs and on the ``hard`` split (the pairs no trivial answer solves)."""
    chosen = [r for r in rows if (str(r.workflow), str(r.machine)) in hard]
    pairs = {(r.workflow, r.machine) for r in rows}
    body = []
    for split, members in ((f"all ({len(pairs)} pairs)", rows), (f"hard ({len(hard)} pairs)", chosen)):
        found = _summaries(members, ("source",))
        kept = [m for m in (*METHODS, OPTIMUM) if (m,) in found]
        body += [[split, m, *(figure(found[(m,)]) for _, figure in FIGURES)] for m in kept]
    return _lines(["split", "method", *(name for name, _ in FIGURES)], body)


def _gives(setting: Setting) -> str:
    """What a setting's context measures, in words."""
    if setting.costs is None:
        return "everything: durations, CPU and memory demands, capacities"
    resources = [r for r in ("CPU", "memory") if any(r.lower() in c for c in setting.costs)]
    given = ["durations"] if setting.durations else []
    if resources:
        capacities = "capacity" if len(resources) == 1 else "capacities"
        given.append(f"{' and '.join(resources)} demands and {capacities}")
    return ", ".join(given) or "the structure only"


def ablation_table(rows: Sequence[ScoreRow]) -> str:
    """One line per prompt setting: what it gives, its counterpart and that counterpart's figures."""
    found = _summaries(rows, ("setting",))
    body = []
    for name, counterpart in COUNTERPARTS.items():
        summary = found[(name,)]
        body.append(
            [
                f"`{name}`",
                _gives(SETTING_CONTEXTS[name]),
                f"`{counterpart.method}`: {counterpart.why}",
                *(figure(summary) for _, figure in FIGURES),
            ]
        )
    return _lines(["setting", "the context gives", "counterpart", *(n for n, _ in FIGURES)], body)


class Tables(NamedTuple):
    """Every table of the page by its marker name, the figures they were made from, and the time taken."""

    tables: dict[str, str]
    rows: list[ScoreRow]
    references: References
    seconds: float


def make(workflows: int | None = None, db: Path | None = None, jobs: int = 2) -> Tables:
    """Run everything and make the tables (``db``: a store to keep and resume; a temporary one by default).

    Raises
    ------
    SystemExit
        With one ``Error:`` line when a figure breaks the oracle's contract (:func:`check`).
    """
    began = time.perf_counter()
    suite = bundled(workflows)
    with tempfile.TemporaryDirectory(prefix="paper-tables-") as tmp:
        rows, references = campaign(suite, db or Path(tmp) / "stress.sqlite", jobs)
    rows += optimum_rows(suite, references)
    # the store holds rows in the order the workers finished: the bootstrap's seeded resampling
    # draws by position, so the intervals are reproducible only in an order fixed by the suite
    order = {(w.id, m.name): i for i, (w, m) in enumerate(every_pair(suite))}
    rows.sort(key=lambda r: (order[str(r.workflow), str(r.machine)], str(r.source)))
    ablation = ablation_rows(suite, references)
    problems = check([*rows, *ablation], references)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SystemExit(f"Error: {problems[0]}{more}")
    sizes = len(suite.workflows), len(suite.machines)
    tables = {
        "suite": f"`{SUITE}`: {sizes[0]} workflows × {sizes[1]} machines = {sizes[0] * sizes[1]} pairs",
        "tiers": split_table(rows, "tier", TIERS),
        "machines": split_table(rows, "machine", PROFILES),
        "hard": hard_table(rows, hard_pairs(suite, references)),
        "ablation": ablation_table(ablation),
    }
    return Tables(tables, [*rows, *ablation], references, time.perf_counter() - began)


def marker(name: str) -> re.Pattern[str]:
    """The span of the page that the table ``name`` fills: between its opening and closing markers."""
    return re.compile(rf"(<!-- paper-tables: {name} -->\n)(.*?)(<!-- /paper-tables: {name} -->)", re.DOTALL)


def embedded(page: str) -> dict[str, str]:
    """The tables the page holds, by marker name."""
    found = re.finditer(r"<!-- paper-tables: (\S+) -->\n(.*?)<!-- /paper-tables: \1 -->", page, re.DOTALL)
    return {match.group(1): match.group(2).rstrip("\n") for match in found}


def splice(page: str, tables: Mapping[str, str]) -> str:
    """``page`` with each table between its markers (a marker missing from the page is an error).

    Raises
    ------
    SystemExit
        Naming a table whose markers the page lacks.
    """
    for name, table in tables.items():
        found = marker(name).search(page)
        if found is None:
            raise SystemExit(f"Error: {PAGE.name} has no <!-- paper-tables: {name} --> markers")
        page = page[: found.end(1)] + table + "\n" + page[found.start(3) :]
    return page


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the page's tables, print them (``--print``) or check them (``--check``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page's tables differ")
    parser.add_argument("--print", dest="show", action="store_true", help="print the tables, write nothing")
    parser.add_argument("--workflows", type=int, help="a sub-sample of this many workflows")
    parser.add_argument("--db", type=Path, help="a results store to keep (resumed when it exists)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="local worker processes (default 2)")
    args = parser.parse_args(argv)
    if args.workflows is not None and not args.show:
        parser.error("--workflows makes a sub-sample's tables, not the page's: use it with --print")
    made = make(args.workflows, args.db, args.jobs)
    print(f"made the tables in {made.seconds:.1f} s", file=sys.stderr)
    if args.show:
        print("\n\n".join(made.tables.values()))
        return 0
    page = PAGE.read_text(encoding="utf-8")
    text = splice(page, made.tables)
    if args.check:
        if text != page:
            print(f"{PAGE.relative_to(ROOT)} is stale: run python docs/scripts/paper_tables.py")
        return 0 if text == page else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
