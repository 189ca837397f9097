"""peakopt report over several inputs: the leaderboard, paired differences, Markdown and LaTeX tables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from report_helpers import parse

from peakopt.cli.main import cli

# Five pairs whose own difficulty varies a lot; "good" is 0.1 better than "bad" on every one.
LEVELS = [0.2, 0.5, 0.9, 0.4, 0.7]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _row(source: str, workflow: str, efficiency: float, **extra: Any) -> dict[str, Any]:
    return {
        "workflow": workflow,
        "machine": "m",
        "source": source,
        "valid": True,
        "safe": efficiency > 0,
        "makespan": 10.0,
        "cva": 0.0,
        "avoidable_cva": 0.0,
        "efficiency": efficiency,
        **extra,
    }


def write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.fixture
def two_models(tmp_path: Path) -> tuple[str, str]:
    good = [_row("good", f"w{i}", level + 0.1) for i, level in enumerate(LEVELS)]
    bad = [_row("bad", f"w{i}", level) for i, level in enumerate(LEVELS)]
    # the worse model's file comes first: the order of the inputs is not the ranking
    return write(tmp_path / "bad.jsonl", bad), write(tmp_path / "good.jsonl", good)


def test_the_better_model_leads_by_exactly_its_lead(two_models: tuple[str, str]) -> None:
    code, out, err = run("report", *two_models, "--json")
    assert code == 0, err
    summaries, ranked, _ = (json.loads(line) for line in out.splitlines())
    assert {s["group"]["source"] for s in summaries} == {"good", "bad"}
    assert ranked["metric"] == "efficiency" and ranked["pair_keys"] == ["workflow", "machine"]
    standings = [(s["rank"], s["source"], s["pairs"]) for s in ranked["standings"]]
    assert standings == [(1, "good", 5), (2, "bad", 5)]
    assert ranked["standings"][0]["mean"] == pytest.approx(sum(LEVELS) / 5 + 0.1)
    [difference] = ranked["differences"]
    assert (difference["better"], difference["worse"], difference["pairs"]) == ("good", "bad", 5)
    # the same lead on every pair: every resample's mean is that lead, the interval is the point
    assert difference["mean"] == pytest.approx(0.1)
    assert difference["interval"]["low"] == pytest.approx(0.1)
    assert difference["interval"]["high"] == pytest.approx(0.1)
    # while each model's own interval is wide: the pairs differ far more than the models
    own = ranked["standings"][0]["interval"]
    assert own["high"] - own["low"] > 0.2


def test_the_terminal_leaderboard_comes_first(two_models: tuple[str, str]) -> None:
    code, _, err = run("report", *two_models)
    assert code == 0, err
    assert err.index("leaderboard") < err.index("paired differences") < err.index("peakopt report")
    assert re.search(r"1 │ good\s+│\s+5 │", err)
    # the interval stacked under its mean, in the same column
    assert re.search(r"\+0\.100 │\n│[^\n]*│\s+\[\+0\.100, \+0\.100\] │", err)


def test_an_interval_computed_by_hand(tmp_path: Path) -> None:
    # Efficiencies 0, 0, 0, 1: a resample's mean is k/4 with k ~ Binomial(4, 1/4), whose CDF is
    # 0.316, 0.738, 0.949, 0.996, 1 at k = 0..4. The 2.5 % quantile is at k = 0 and the 97.5 %
    # one at k = 3 (0.949 < 0.975 < 0.996, far apart for 9,999 resamples): [0, 0.75] around 0.25.
    rows = [_row("m", f"w{i}", value) for i, value in enumerate([0.0, 0.0, 0.0, 1.0])]
    rows += [_row("other", f"w{i}", 1.0) for i in range(4)]
    code, out, err = run("report", write(tmp_path / "s.jsonl", rows), "--table-format", "md")
    assert code == 0, err
    assert "| 2 | m | 4 | 0.250 [0.000, 0.750] |" in out
    # the summary's efficiency cell says the same, and the difference is the complement
    assert "| m | 0.250 [0.000, 0.750] | 4 |" in out
    assert "| other | m | 4 | +0.750 [+0.250, +1.000] |" in out


def test_pairs_are_compared_only_where_both_answered(tmp_path: Path, two_models: tuple[str, str]) -> None:
    partial = [_row("late", f"w{i}", 1.0) for i in (0, 2)]
    code, out, err = run("report", *two_models, write(tmp_path / "late.jsonl", partial), "--json")
    assert code == 0, err
    ranked = json.loads(out.splitlines()[1])
    assert [(s["source"], s["pairs"]) for s in ranked["standings"]] == [("late", 2), ("good", 5), ("bad", 5)]
    found = {(d["better"], d["worse"]): d for d in ranked["differences"]}
    assert set(found) == {("late", "good"), ("late", "bad"), ("good", "bad")}
    assert found[("late", "bad")]["pairs"] == 2
    # on w0 and w2 only: 1 - 0.2 and 1 - 0.9
    assert found[("late", "bad")]["mean"] == pytest.approx(((1 - 0.2) + (1 - 0.9)) / 2)


def test_a_setting_is_part_of_the_pair(tmp_path: Path) -> None:
    rows = [_row("a", "w", 1.0, setting="rasc"), _row("a", "w", 0.5, setting="no-profile")]
    rows += [_row("b", "w", 0.5, setting="rasc"), _row("b", "w", 0.5, setting="no-profile")]
    code, out, err = run("report", write(tmp_path / "s.jsonl", rows), "--json")
    assert code == 0, err
    ranked = json.loads(out.splitlines()[1])
    assert ranked["pair_keys"] == ["workflow", "machine", "setting"]
    assert ranked["standings"][0]["pairs"] == 2
    assert ranked["differences"][0]["pairs"] == 2


def test_one_source_has_no_leaderboard(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [_row("alone", f"w{i}", 0.5) for i in range(3)])
    code, out, err = run("report", path, "--json")
    assert code == 0, err
    # the summaries and the provenance, no leaderboard between them
    assert len(out.splitlines()) == 2 and "leaderboard" not in err
    assert "inputs" in json.loads(out.splitlines()[1])


def _markdown_cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_markdown_tables_parse_back(tmp_path: Path, two_models: tuple[str, str]) -> None:
    rows = [_row("a|b", "w0", 0.5), _row("c", "w0", 0.25)]
    code, out, err = run("report", *two_models, write(tmp_path / "odd.jsonl", rows), "--table-format", "md")
    assert code == 0, err
    tables = [block for block in out.split("\n\n") if block.startswith("|")]
    assert len(tables) == 4  # leaderboard, differences, summary, inputs
    for block in tables:
        lines = block.strip().splitlines()
        widths = {len(_markdown_cells(line)) for line in lines}
        assert len(widths) == 1, block
        assert set(lines[1].replace("|", "")) <= set(":-")
    summary = tables[2].strip().splitlines()
    assert _markdown_cells(summary[0])[:3] == ["source", "efficiency", "rows"]
    assert any(_markdown_cells(line)[0] == r"a\|b" for line in summary[2:])
    assert "peakopt report" not in err  # the tables went to stdout, not to stderr


def test_latex_escapes_what_latex_reads_as_markup(tmp_path: Path) -> None:
    rows = [_row("my_model&co", "w0", 0.5), _row("100%", "w0", 1.0)]
    code, out, err = run("report", write(tmp_path / "s.jsonl", rows), "--table-format", "latex")
    assert code == 0, err
    assert out.count(r"\begin{tabular}") == 4 and out.count(r"\end{tabular}") == 4  # with the inputs
    assert r"my\_model\&co" in out and r"100\%" in out
    for block in out.split(r"\begin{tabular}")[1:]:
        spec = block[1 : block.index("}")]
        body = [line for line in block.splitlines() if line.endswith(r"\\")]
        cells = [re.split(r"(?<!\\)&", line[: -len(r"\\")]) for line in body]
        # every row has as many cells as the column spec (no stray &), and no bare % comments a cell out
        assert {len(row) for row in cells} == {len(spec)}
        assert all("%" not in cell.replace(r"\%", "") for row in cells for cell in row)


def test_score_and_plan_score_export_their_tables(tmp_path: Path) -> None:
    schedules = tmp_path / "schedules.jsonl"
    assert run("schedule", "bundled:refund", "-m", "asap,serial", "-o", str(schedules))[0] == 0
    code, out, err = run("score", "bundled:refund", "-s", str(schedules), "--table-format", "md", "-q")
    assert code == 0, err
    header = _markdown_cells(out.splitlines()[2])
    assert header[0] == "group" and "efficiency" not in header  # no references: no optimum
    assert len(out.strip().splitlines()) == 2 + 2 + 2  # title, blank, header, rule, asap, serial
    plans = write(tmp_path / "plans.jsonl", [{"workflow": "refund", "source": "m", "dependencies": {}}])
    code, out, err = run("plan-score", "-t", "bundled:refund", "-p", plans, "--table-format", "latex")
    assert code == 0, err
    assert "edge F1" in out and r"\begin{tabular}" in out


@pytest.mark.parametrize("command", ["report", "score"])
def test_a_table_format_with_json_is_a_usage_error(tmp_path: Path, command: str) -> None:
    scores = write(tmp_path / "s.jsonl", [_row("a", "w0", 0.5)])
    args = [scores] if command == "report" else ["bundled:refund", "-s", scores]
    code, out, err = run(command, *args, "--table-format", "md", "--json")
    assert code == 2 and out == ""
    assert "--table-format and --json/--csv are exclusive" in err


def test_csv_summaries_carry_their_intervals(two_models: tuple[str, str]) -> None:
    code, out, _ = run("report", *two_models, "--csv")
    assert code == 0
    header = out.splitlines()[0].split(",")
    wanted = {"intervals.efficiency.low", "intervals.efficiency.high", "intervals.safe_rate.level"}
    assert wanted <= set(header)


def test_the_html_report_opens_with_the_leaderboard(tmp_path: Path, two_models: tuple[str, str]) -> None:
    page = tmp_path / "report.html"
    code, _, err = run("report", *two_models, "-o", str(page))
    assert code == 0, err
    text = page.read_text()
    assert re.findall(r"<h2[^>]*>([^<]+)</h2>", text)[0] == "Leaderboard"
    tables = parse(text)
    assert tables.heads["standings"] == ["rank", "source", "pairs", "efficiency"]
    assert [row[:3] for row in tables.rows["standings"]] == [["1", "good", "5"], ["2", "bad", "5"]]
    assert tables.rows["differences"] == [["good", "bad", "5", "+0.100 [+0.100, +0.100]"]]
    assert tables.heads["summary"][:2] == ["source", "efficiency"]
