"""docs/paper-tables.md: its tables are what docs/scripts/paper_tables.py makes, and the oracle's figures.

The quick tier runs the script on a sub-sample of the bundled suite (and reads the committed
page's tables); the full regeneration, about a minute, is ``slow``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from docs_scripts import docs_script
from paths import ROOT

from peakopt.models import SolveResult
from peakopt.oracle import ScoreRow

PAGE = ROOT / "docs" / "paper-tables.md"
#: The tables with one line per method and group, and the column naming the group.
METHOD_TABLES = {"tiers": "tier", "machines": "machine", "hard": "split"}


def paper_tables() -> ModuleType:
    """docs/scripts/paper_tables.py, a script rather than an installed module."""
    return docs_script("paper_tables")


def cells(table: str) -> list[dict[str, str]]:
    """A Markdown table's lines as {column: cell}, the header and its rule left out."""
    header, _, *body = table.splitlines()
    names = [c.strip() for c in header.strip("|").split("|")]
    return [dict(zip(names, (c.strip() for c in line.strip("|").split("|")), strict=True)) for line in body]


def figures(cell: str) -> list[float]:
    """The numbers of a cell: ``0.912 [0.880, 0.940]`` is three."""
    return [float(part) for part in cell.replace("[", " ").replace("]", " ").replace(",", " ").split()]


def assert_consistent(tables: dict[str, str]) -> None:
    """What the oracle's contract makes true of any run's tables, whatever the sample."""
    for name, group in METHOD_TABLES.items():
        lines = cells(tables[name])
        groups = {line[group] for line in lines}
        assert groups, name
        for value in groups:
            members = {line["method"]: line for line in lines if line[group] == value}
            best = members["optimum"]
            assert best["gap to OPT (%)"] == "0.00" and best["safe (%)"] == "100.0", (name, value)
            assert figures(best["efficiency"]) == [1.0, 1.0, 1.0], (name, value)
            for method, line in members.items():
                assert all(0.0 <= f <= 1.0 for f in figures(line["efficiency"])), (name, value, method)
                # the optimum's CVA is the unavoidable floor: no method's mean is below it
                assert float(line["CVA"]) >= float(best["CVA"]), (name, value, method)
                if line["safe (%)"] == "100.0":  # every schedule safe: none beats the optimum
                    assert float(line["SL (s)"]) >= float(best["SL (s)"]), (name, value, method)
    for line in cells(tables["ablation"]):
        assert all(0.0 <= f <= 1.0 for f in figures(line["efficiency"])), line["setting"]


def test_the_page_holds_every_table_the_script_makes() -> None:
    page = PAGE.read_text(encoding="utf-8")
    found = paper_tables().embedded(page)
    assert set(found) == {"suite", "tiers", "machines", "hard", "ablation"}
    assert all(found.values()), "a table of the page is empty: run python docs/scripts/paper_tables.py"
    assert found["suite"] == "`bundled:default`: 300 workflows × 3 machines = 900 pairs"
    assert_consistent(found)
    ablation = {line["setting"].strip("`"): line for line in cells(found["ablation"])}
    assert list(ablation) == ["rasc", "durations", "cpu", "memory", "cpu-memory", "no-profile"]
    # what the page's text says of them
    words = ("setting", "the context gives", "counterpart")
    figures_of = {name: [v for k, v in line.items() if k not in words] for name, line in ablation.items()}
    assert figures_of["durations"] == figures_of["no-profile"], "durations and no-profile are one ASAP"
    assert ablation["memory"]["safe (%)"] == "100.0" and float(ablation["cpu"]["safe (%)"]) < 100
    assert figures(ablation["memory"]["efficiency"])[0] >= figures(ablation["cpu-memory"]["efficiency"])[0]


def test_a_sub_sample_gives_tables_consistent_with_the_oracle(tmp_path: Path) -> None:
    made = paper_tables().make(workflows=6, db=tmp_path / "stress.sqlite", jobs=1)
    assert set(made.tables) == set(paper_tables().embedded(PAGE.read_text(encoding="utf-8")))
    assert made.tables["suite"] == "`bundled:default`: 6 workflows × 3 machines = 18 pairs"
    assert len(made.references) == 18 and all(r.status == "optimal" for r in made.references.values())
    assert_consistent(made.tables)
    tiers = {line["tier"] for line in cells(made.tables["tiers"])}
    assert tiers == {"easy", "medium", "hard", "all"}  # the sample spreads over every tier
    optimum = [r for r in made.rows if r.source == "optimum"]
    assert len(optimum) == 18 and all(r.efficiency == pytest.approx(1.0) for r in optimum)
    # the ablation's rows are judged on the real machines: the cpu setting's counterpart ignores memory
    assert {r.setting for r in made.rows if r.setting} == set(paper_tables().COUNTERPARTS)


def test_the_checks_catch_figures_that_break_the_contract() -> None:
    script = paper_tables()
    fine = ScoreRow(workflow="w", machine="m", source="optimum", valid=True, safe=True, gap=0.0)
    fine = fine.model_copy(update={"efficiency": 1.0})
    proven = SolveResult(workflow="w", machine="m", status="optimal", makespan=1.0, lower_bound=1.0)
    assert script.check([fine], {("w", "m"): proven}) == []
    above = fine.model_copy(update={"source": "asap", "efficiency": 1.2})
    shorter = fine.model_copy(update={"source": "asap", "gap": -0.1, "efficiency": 1.0})
    unsafe = fine.model_copy(update={"safe": False, "gap": None, "efficiency": 0.0})
    unproven = {("w", "m"): proven.model_copy(update={"status": "feasible", "lower_bound": 0.5})}
    problems = script.check([above, shorter, unsafe], unproven)
    assert len(problems) == 5, problems
    assert "reference feasible" in problems[0] and "above 1" in problems[1]
    assert "shorter than the optimum" in problems[2] and "not safe at gap 0" in problems[3]


def test_splicing_replaces_only_what_is_between_the_markers() -> None:
    script = paper_tables()
    page = "# t\n\n<!-- paper-tables: a -->\nold\n<!-- /paper-tables: a -->\n\ntext\n"
    assert script.splice(page, {"a": "| x |\n|---|\n| 1 |"}) == page.replace("old", "| x |\n|---|\n| 1 |")
    assert script.splice(page, script.embedded(page)) == page
    with pytest.raises(SystemExit, match="no <!-- paper-tables: b --> markers"):
        script.splice(page, {"b": "x"})


def test_a_sub_sample_cannot_overwrite_the_page() -> None:
    with pytest.raises(SystemExit) as raised:
        paper_tables().main(["--workflows", "3"])
    assert raised.value.code == 2


@pytest.mark.slow
def test_the_page_is_what_the_script_makes_now() -> None:
    made = paper_tables().make()
    page = PAGE.read_text(encoding="utf-8")
    assert paper_tables().splice(page, made.tables) == page, (
        "docs/paper-tables.md is stale: run python docs/scripts/paper_tables.py"
    )
