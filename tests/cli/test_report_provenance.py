"""``peakopt report``'s provenance, rank order, floor rows and ``--split``; ``score --split``.

Every figure is checked against an independent path: the floor's rows against the same trivial
answers scheduled and scored by ``peakopt schedule`` and ``peakopt score``, the hard split
against the oracle's evaluation of each trivial answer on each kept pair.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from peakopt.campaign.floor import trivial_starts
from peakopt.campaign.provenance import UNRECORDED, Provenance, oracle_identity, peakopt_version
from peakopt.instances import load
from peakopt.models import Schedule, content_hash
from peakopt.oracle import evaluate, same_time


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 48-pair suite, its references, and the scores of ``serial`` and ``asap`` (serial first)."""
    folder = tmp_path_factory.mktemp("provenance")
    files = {name: folder / f"{name}.jsonl" for name in ("refs", "schedules", "scores")}
    files["suite"] = folder / "suite.json"
    suite_path = str(files["suite"])
    assert run("generate", "--easy", "8", "--medium", "6", "--hard", "2", "-o", suite_path)[0] == 0
    assert run("solve", suite_path, "-o", str(files["refs"]), "-q")[0] == 0
    assert run("schedule", suite_path, "-m", "serial,asap", "-o", str(files["schedules"]))[0] == 0
    code, _, err = run(
        "score",
        suite_path,
        "-s",
        str(files["schedules"]),
        "-r",
        str(files["refs"]),
        "-o",
        str(files["scores"]),
    )
    assert code == 0, err
    return files


def _report(scored: dict[str, Path], *extra: str) -> tuple[int, str, str]:
    return run(
        "report", str(scored["scores"]), "--suite", str(scored["suite"]), "-r", str(scored["refs"]), *extra
    )


def _md_tables(out: str) -> dict[str, list[list[str]]]:
    """The Markdown tables of ``--table-format md`` by their bold title line, as rows of cells."""
    tables: dict[str, list[list[str]]] = {}
    title = ""
    for block in out.strip().split("\n\n"):
        text = block.strip()
        if text.startswith("**") and text.endswith("**"):
            title = text.strip("*").replace("\\", "")
        elif text.startswith("|"):
            lines = [line for line in text.splitlines() if not set(line) <= set("|:- ")]
            tables[title] = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]
    return tables


def test_the_report_names_its_suite_code_and_date(scored: dict[str, Path], tmp_path: Path) -> None:
    suite_path = str(scored["suite"])
    page = tmp_path / "r.html"
    code, _, err = _report(scored, "-o", str(page), "--worst", "0")
    assert code == 0, err
    digest = content_hash(load(suite_path))
    made = re.search(
        r"made (\S+); peakopt (\S+); oracle (\S+); suites (.+?); split all", " ".join(err.split())
    )
    assert made is not None, err
    assert made[2] == peakopt_version() and made[3] == oracle_identity()
    assert made[4] == f"{suite_path} ({digest})"
    text = page.read_text()
    assert f"<title>peakopt report: {suite_path} ({digest}) (1 input)</title>" in text
    assert 'id="made"' in text and oracle_identity() in text and f"peakopt {peakopt_version()}" in text
    inputs = text[text.index('<table id="provenance">') :]
    assert str(scored["scores"]) in inputs and "scores file" in inputs and digest in inputs


def test_a_provenance_says_what_it_does_not_record() -> None:
    shown = Provenance("x.jsonl", "scores file", rows=2, pairs=1, sources=("a",)).fields()
    assert shown["suite"] == shown["oracle"] == shown["peakopt"] == shown["created"] == UNRECORDED
    assert "task" not in shown and "epochs" not in shown  # a log's fields only
    logged = Provenance("l.eval", "Inspect log", 1, 1, ("m",), task="peakopt/schedule (version 1)", epochs=2)
    assert logged.fields()["epochs"] == "2" and logged.fields()["arguments"] == "{}"


def test_every_table_follows_the_leaderboard(scored: dict[str, Path], tmp_path: Path) -> None:
    # serial comes first in the scores file, asap ranks first (0.92 against 0.78 here)
    code, out, err = _report(scored, "--table-format", "md")
    assert code == 0, err
    tables = _md_tables(out)
    board = [row[1] for row in next(t for title, t in tables.items() if title.startswith("leaderboard"))[1:]]
    summary = next(t for title, t in tables.items() if title.startswith("peakopt report"))
    assert [row[0] for row in summary[1:]] == board
    page = tmp_path / "r.html"
    assert _report(scored, "-o", str(page), "--worst", "1")[0] == 0
    text = page.read_text()
    html_summary = text[
        text.index('<table id="summary">') : text.index("</table>", text.index('id="summary"'))
    ]
    found = re.findall(r'<td class="key">([^<]+)</td>', html_summary)
    assert found == board
    titles = re.findall(r'alt="([^"]+)"', text[text.index('id="worst"') :])
    assert [next(s for s in board if t.startswith(s)) for t in titles] == sorted(
        (next(s for s in board if t.startswith(s)) for t in titles), key=board.index
    )


def test_the_floor_rows_are_the_trivial_answers_scored(scored: dict[str, Path], tmp_path: Path) -> None:
    suite_path = str(scored["suite"])
    code, out, err = _report(scored, "--table-format", "md")
    assert code == 0, err
    floor = {row[0]: row for row in next(t for title, t in tables_titled(out, "floor"))[1:]}
    assert set(floor) == {"trivial:zero", "trivial:serial", "trivial:asap"}
    # the same answers, scheduled and scored as any method's: the same efficiency and interval
    summary = {row[0]: row for row in next(t for title, t in tables_titled(out, "peakopt report"))[1:]}
    for method in ("serial", "asap"):
        assert floor[f"trivial:{method}"][3] == " ".join(summary[method][1:2]), (floor, summary)
    pairs = len(load(suite_path).workflows) * len(load(suite_path).machines)
    assert {row[2] for row in floor.values()} == {str(pairs)}


def tables_titled(out: str, prefix: str) -> list[tuple[str, list[list[str]]]]:
    """The Markdown tables whose title starts with ``prefix``."""
    return [(title, table) for title, table in _md_tables(out).items() if title.startswith(prefix)]


def test_the_hard_split_holds_no_pair_a_trivial_answer_solves(scored: dict[str, Path]) -> None:
    suite_path = str(scored["suite"])
    code, out, err = run(
        "score",
        suite_path,
        "-s",
        str(scored["schedules"]),
        "-r",
        str(scored["refs"]),
        "--split",
        "hard",
        "--json",
    )
    assert code == 0, err
    kept = [json.loads(line) for line in out.splitlines()]
    suite = load(suite_path)
    references = {
        (r["workflow"], r["machine"]): r for r in map(json.loads, scored["refs"].read_text().splitlines())
    }
    pairs = {(row["workflow"], row["machine"]) for row in kept}
    assert pairs and len(kept) == 2 * len(pairs)  # serial and asap on each
    for workflow_id, machine_name in pairs:
        workflow, machine = suite.workflow(workflow_id), suite.machine(machine_name)
        best = references[(workflow_id, machine_name)]
        assert best["status"] == "optimal"
        for answer, starts in trivial_starts(workflow, machine).items():
            schedule = Schedule(workflow=workflow.id, machine=machine.name, starts=starts, source=answer)
            score = evaluate(workflow, machine, schedule)
            solved = (
                score.valid
                and score.safe
                and (score.makespan <= best["makespan"] or same_time(score.makespan, best["makespan"]))
            )
            assert not solved, (workflow_id, machine_name, answer)
    # report --split hard keeps the same pairs
    code, out, err = _report(scored, "--split", "hard", "--json")
    assert code == 0, err
    (summary,) = [s for s in json.loads(out.splitlines()[0]) if s["group"]["source"] == "asap"]
    assert summary["records"] == len(pairs)


def test_a_split_needs_what_it_is_drawn_from(scored: dict[str, Path], tmp_path: Path) -> None:
    suite_path = str(scored["suite"])
    code, _, err = run("score", suite_path, "-s", str(scored["schedules"]), "--split", "hard")
    assert code == 2 and "--split hard needs the optimum of every pair" in err
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(scored["refs"].read_text().splitlines()[:2]) + "\n")
    code, _, err = run(
        "score", suite_path, "-s", str(scored["schedules"]), "-r", str(partial), "--split", "hard"
    )
    assert code == 1 and err.startswith(f"Error: {partial}: --split hard needs a reference for every pair")
    code, _, err = run("report", str(scored["scores"]), "--split", "hard")
    assert code == 1 and err.startswith(f"Error: {scored['scores']}: --split hard needs the suite")
    code, _, err = run("report", str(scored["scores"]))
    assert code == 0 and "no floor" in err


def test_a_store_records_who_wrote_it_and_its_oracle(scored: dict[str, Path], tmp_path: Path) -> None:
    suite_path = str(scored["suite"])
    db = tmp_path / "s.sqlite"
    code, _, err = run("stress", suite_path, "-m", "serial", "--db", str(db), "-q")
    assert code == 0, err
    code, out, err = run("report", str(db), "--table-format", "md")
    assert code == 0, err
    (inputs,) = [t for title, t in tables_titled(out, "inputs")]
    fields = {row[0]: row[1] for row in inputs}
    assert fields["kind"] == "results store" and fields["peakopt"] == peakopt_version()
    assert fields["oracle"] == oracle_identity()
    suite = load(suite_path)
    assert fields["suite"].startswith(f"{len(suite.workflows)} workflows × {len(suite.machines)} machines (")
    # the floor from the store's own workflows, machines and references: as from the suite
    (store_floor,) = [t for title, t in tables_titled(out, "floor")]
    code, out, err = _report(scored, "--table-format", "md")
    assert code == 0, err
    (suite_floor,) = [t for title, t in tables_titled(out, "floor")]
    assert store_floor == suite_floor
    code, out, err = run("report", str(db), "--split", "hard", "--json")
    assert code == 0, err
    (serial,) = json.loads(out.splitlines()[0])
    assert 0 < serial["records"] < len(suite.workflows) * len(suite.machines)


def _json_provenance(out: str) -> dict[str, Any]:
    """The last document of ``report --json``: the report's own provenance and its inputs'."""
    found: dict[str, Any] = json.loads(out.splitlines()[-1])
    return found


def test_the_json_report_carries_each_inputs_provenance(scored: dict[str, Path], tmp_path: Path) -> None:
    suite_path = str(scored["suite"])
    code, out, err = _report(scored, "--json")
    assert code == 0, err
    # the summaries, the leaderboard (two sources), then the provenance: one document a line
    documents = [json.loads(line) for line in out.splitlines()]
    assert len(documents) == 3 and isinstance(documents[0], list) and "standings" in documents[1]
    made = _json_provenance(out)
    assert made["peakopt"] == peakopt_version() and made["oracle"] == oracle_identity()
    digest = content_hash(load(suite_path))
    assert made["suites"] == f"{suite_path} ({digest})" and made["split"] == "all"
    (given,) = made["inputs"]
    assert given["path"] == str(scored["scores"]) and given["kind"] == "scores file"
    assert given["suite"] == suite_path and given["suite_hash"] == digest
    assert given["sources"] == ["serial", "asap"] and given["rows"] == sum(s["records"] for s in documents[0])
    assert given["peakopt"] is None and given["oracle"] is None  # a scores file records neither
    # every field the terminal's inputs table shows, and nothing else: the same Provenance
    assert set(given) == {f.name for f in dataclasses.fields(Provenance)}
    code, table, err = _report(scored, "--table-format", "md")
    assert code == 0, err
    ((_, inputs),) = tables_titled(table, "inputs")
    listed: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}
    assert {row[0]: row[1] for row in inputs[1:]} == Provenance(**listed).fields()


def test_the_json_report_of_a_store_names_its_oracle(scored: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    code, _, err = run("stress", str(scored["suite"]), "-m", "serial", "--db", str(db), "-q")
    assert code == 0, err
    code, out, err = run("report", str(db), "--json")
    assert code == 0, err
    assert len(out.splitlines()) == 2  # one source: no leaderboard
    (given,) = _json_provenance(out)["inputs"]
    assert given["kind"] == "results store" and given["oracle"] == oracle_identity()
    assert given["peakopt"] == peakopt_version() and given["created"] is not None
