"""Aggregates never mix what must not be mixed (issue 22, class 7).

- rows judged under different settings (prompt setting, noise, samples, execution policy) are
  never merged under one method: the summary groups by every setting that varies;
- repeated answers to one pair (Inspect's epochs) are not independent pairs: the summary's
  intervals resample pairs, as the leaderboard's do;
- an impossible stored figure (a NaN efficiency, an efficiency of 1.7) is refused with one
  ``Error:`` naming the file, the row and the rule;
- a leaderboard that cannot be drawn (a model without a proven optimum) says why in one line.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from peakopt.cli.main import cli
from peakopt.oracle.tables.intervals import mean_interval
from peakopt.oracle.tables.leaderboard import board
from peakopt.oracle.tables.rows import ScoreRow


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    escaped = (
        "" if result.exception is None or isinstance(result.exception, SystemExit) else repr(result.exception)
    )
    return result.exit_code, result.stdout, result.stderr + escaped


def row(source: str, workflow: str, efficiency: float | None, **extra: Any) -> dict[str, Any]:
    return {
        "workflow": workflow,
        "machine": "m",
        "source": source,
        "valid": True,
        "safe": efficiency is None or efficiency > 0,
        "makespan": 10.0,
        "cva": 0.0,
        "avoidable_cva": 0.0,
        "efficiency": efficiency,
        **extra,
    }


def write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def sampled(**settings: Any) -> dict[str, Any]:
    """A row's Monte Carlo figures under ``settings`` (execution, samples, noise...)."""
    return {"monte_carlo": {"execution": "order", "samples": 10, "safe_rate": 1.0, **settings}}


#: Per setting a row can carry: the extra fields of its two values, and the group value of each.
SETTINGS = {
    "setting": ({"setting": "rasc"}, {"setting": "durations"}, "rasc", "durations"),
    "noise": (sampled(noise_duration=0.1), sampled(noise_duration=0.3), "0.1", "0.3"),
    "noise_demand": (sampled(noise_demand=0.1), sampled(noise_demand=0.5), "0.1", "0.5"),
    "samples": (sampled(samples=10), sampled(samples=50), "10", "50"),
    "execution": (sampled(execution="order"), sampled(execution="literal"), "order", "literal"),
    "sampled or not": ({}, sampled(samples=10), None, "10"),
}


@pytest.mark.parametrize("key", SETTINGS)
def test_rows_of_different_settings_are_never_merged(tmp_path: Path, key: str) -> None:
    first, second, one, other = SETTINGS[key]
    group = "samples" if key == "sampled or not" else key
    rows = [row("m", f"w{i}", 1.0, **first) for i in range(3)]
    rows += [row("m", f"w{i}", 0.5, **second) for i in range(3)]
    rows += [row("n", f"w{i}", 0.8, **first) for i in range(3)]
    rows += [row("n", f"w{i}", 0.8, **second) for i in range(3)]
    path = write(tmp_path / "s.jsonl", rows)
    code, out, err = run("report", path, "--json")
    assert code == 0, err
    summaries, ranked, _ = (json.loads(line) for line in out.splitlines())
    found = {(s["group"]["source"], s["group"][group]): s["efficiency"] for s in summaries}
    assert found == pytest.approx({("m", one): 1.0, ("m", other): 0.5, ("n", one): 0.8, ("n", other): 0.8})
    # the leaderboard compares sources on the same questions: a pair under one setting
    assert group in ranked["pair_keys"]
    assert {s["source"]: s["pairs"] for s in ranked["standings"]} == {"m": 6, "n": 6}
    # the HTML report's summary shows the same groups
    page = tmp_path / "r.html"
    code, _, err = run("report", path, "-o", str(page))
    assert code == 0, err
    summary = page.read_text().split('id="summary"')[1].split("</table>")[0]
    assert summary.count("<tr>") == 1 + 4


def test_rows_of_one_setting_keep_their_grouping(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl", [row("m", f"w{i}", 1.0, **sampled(noise_duration=0.2)) for i in range(2)]
    )
    code, out, err = run("report", path, "--json")
    assert code == 0, err
    [summary] = json.loads(out.splitlines()[0])
    assert summary["group"] == {"source": "m"}


@pytest.mark.parametrize("epochs", [1, 2, 5])
def test_summary_intervals_resample_pairs_not_epochs(tmp_path: Path, epochs: int) -> None:
    levels = [0.0, 0.5, 1.0, 0.25]
    rows = [
        row("m", f"w{i}", level, makespan=10.0 + i) for i, level in enumerate(levels) for _ in range(epochs)
    ]
    rows += [row("n", f"w{i}", 1.0) for i in range(len(levels)) for _ in range(epochs)]
    code, out, err = run("report", write(tmp_path / "s.jsonl", rows), "--json")
    assert code == 0, err
    summaries, ranked, _ = (json.loads(line) for line in out.splitlines())
    [mine] = [s for s in summaries if s["group"]["source"] == "m"]
    [standing] = [s for s in ranked["standings"] if s["source"] == "m"]
    # the summary's interval of the efficiency is the leaderboard's: one value per pair
    assert mine["intervals"]["efficiency"] == standing["interval"]
    expected = mean_interval(levels)
    assert expected is not None
    assert mine["intervals"]["efficiency"]["low"] == pytest.approx(expected.low)
    assert mine["intervals"]["efficiency"]["high"] == pytest.approx(expected.high)
    makespans = mean_interval([10.0 + i for i in range(len(levels))])
    assert makespans is not None
    assert mine["intervals"]["mean_makespan"]["low"] == pytest.approx(makespans.low)


#: Stored figures no schedule can have, and where they are.
IMPOSSIBLE = {
    "NaN efficiency": ({"efficiency": math.nan}, "efficiency"),
    "efficiency above 1": ({"efficiency": 1.7}, "efficiency"),
    "negative efficiency": ({"efficiency": -0.2}, "efficiency"),
    "infinite efficiency": ({"efficiency": math.inf}, "efficiency"),
    "Monte Carlo efficiency above 1": (sampled(efficiency=1.5), "efficiency"),
    "Monte Carlo safe rate above 1": (sampled(safe_rate=2.0), "safe_rate"),
    "NaN Monte Carlo overflow rate": (sampled(overflow_rate=math.nan), "overflow_rate"),
}


@pytest.mark.parametrize("case", IMPOSSIBLE)
def test_an_impossible_stored_figure_is_refused(tmp_path: Path, case: str) -> None:
    extra, field = IMPOSSIBLE[case]
    rows = [row("m", "w0", 0.5), {**row("m", "w1", 0.5), **extra}]
    path = write(tmp_path / "bad.jsonl", rows)
    code, _, err = run("report", path)
    assert code == 1, err
    [line] = err.strip().splitlines()
    assert line.startswith("Error: ") and "bad.jsonl" in line and "line 2" in line and field in line
    assert "[0, 1]" in line or "finite" in line


def test_an_efficiency_at_one_within_the_tolerance_is_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [row("m", "w0", 1.0 + 1e-13), row("m", "w1", 0.0)])
    assert run("report", path)[0] == 0


def test_an_impossible_figure_in_a_store_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            {
                "machines": [{"name": "m", "capacity": {"cpu": 2}}],
                "workflows": [{"id": "w", "tasks": [{"id": "a", "duration": 1, "demand": {"cpu": 1}}]}],
            }
        )
    )
    store = tmp_path / "st.sqlite"
    code, _, err = run("stress", str(suite), "-m", "asap", "--db", str(store), "-j", "1", "--time-limit", "5")
    assert code == 0, err
    with sqlite3.connect(store) as db:
        (text,) = db.execute("SELECT row FROM results").fetchone()
        db.execute("UPDATE results SET row = ?", (json.dumps({**json.loads(text), "efficiency": 1.7}),))
    code, _, err = run("report", str(store))
    assert code == 1, err
    [line] = err.strip().splitlines()
    assert line.startswith("Error: ") and "st.sqlite" in line and "efficiency" in line and "[0, 1]" in line


def test_the_oracle_never_writes_an_impossible_efficiency() -> None:
    with pytest.raises(ValueError, match="efficiency"):
        ScoreRow(valid=True, efficiency=1.7)
    assert board([ScoreRow(valid=True, source="m", workflow="w", efficiency=1.0)]).standings[0].mean == 1.0


#: Leaderboards that cannot rank every source: who has rows, who has an efficiency.
UNRANKED: dict[str, tuple[dict[str, float | None], list[str], bool]] = {
    "one of two without an optimum": ({"a": 0.9, "b": None}, ["b"], False),
    "both without an optimum": ({"a": None, "b": None}, ["a", "b"], False),
    "one of three without an optimum": ({"a": 0.9, "b": 0.5, "c": None}, ["c"], True),
}


@pytest.mark.parametrize("case", UNRANKED)
def test_a_missing_leaderboard_says_why(tmp_path: Path, case: str) -> None:
    sources, unranked, drawn = UNRANKED[case]
    rows = [row(source, f"w{i}", value) for source, value in sources.items() for i in range(2)]
    path = write(tmp_path / "s.jsonl", rows)
    code, _, err = run("report", path)
    assert code == 0, err
    assert ("leaderboard (mean efficiency" in err) is drawn
    [line] = [text for text in err.splitlines() if "no proven optimum" in text]
    assert all(source in line for source in unranked)
    assert ("not ranked" in line) if drawn else ("no leaderboard" in line)
    page = tmp_path / "r.html"
    assert run("report", path, "-o", str(page))[0] == 0
    assert "no proven optimum" in page.read_text()
    code, out, _ = run("report", path, "--json")
    documents = out.splitlines()
    if drawn:
        assert json.loads(documents[1])["unranked"] == unranked
    else:
        assert len(documents) == 2  # no leaderboard document: the summaries, then the provenance
        assert "inputs" in json.loads(documents[1])


def test_one_source_needs_no_leaderboard(tmp_path: Path) -> None:
    code, _, err = run("report", write(tmp_path / "s.jsonl", [row("a", "w", None)]))
    assert code == 0, err
    assert "leaderboard" not in err


@pytest.mark.parametrize("key", SETTINGS)
def test_charts_draw_each_setting_apart(key: str) -> None:
    from peakopt.plots.charts import gap_profile, group_bars, makespan_vs_cva

    first, second, _, _ = SETTINGS[key]
    dicts = [row("m", f"w{i}", 1.0, tier="t", gap=0.0, **first) for i in range(2)]
    dicts += [row("m", f"w{i}", 0.5, tier="t", gap=1.0, **second) for i in range(2)]
    rows = [ScoreRow.model_validate({**d, "reference_status": "optimal"}) for d in dicts]
    for fig in (gap_profile(rows), makespan_vs_cva(rows), group_bars(rows, "tier", "efficiency")):
        assert fig is not None
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert len(labels) == 2 and all(label.startswith("m / ") for label in labels), labels
