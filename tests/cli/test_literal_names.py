"""Names from users' files are shown literally everywhere: never read as rich markup, HTML or mathtext.

A workflow, machine, step, resource or source name (and a file name) such as ``[/bold]`` once made
``report``, ``score`` and trace scoring die with rich's ``MarkupError``, and ``m[red]x`` was
shown as ``mx``. Two tiers: every command that prints names, run on a table of hostile names;
and a property over arbitrary text through the table builders, the console and the progress bar.
"""

from __future__ import annotations

import ast
import html
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st
from project_root import ROOT

from peakopt.campaign.summaries import summaries
from peakopt.cli import exports
from peakopt.cli.cluster import progress_bar
from peakopt.cli.main import cli
from peakopt.cli.messages import console
from peakopt.cli.summaries import errors_table, report_table
from peakopt.cli.tables import board_tables, score_table
from peakopt.oracle.tables.leaderboard import board
from peakopt.oracle.tables.rows import ScoreRow

#: rich markup (closing, opening, links, escapes), emoji codes, HTML, mathtext, a legend's hidden label.
NAMES = [
    "[/bold]",
    "m[red]x",
    "[bold]b[/]",
    "a\\[b]",
    "x\\",
    "[link=http://e.x]y[/link]",
    "日本[語]ü",
    "<script>alert(1)</script>",
    ":smile:",
    "$x^2$",
    "$\\frac{$",
    "_hidden",
    "[",
    "]",
    "&amp;",
    "*a*_b|`c`",
    "[x](y)",
]


def suite(tmp: Path, name: str) -> Path:
    """A machine, a workflow, steps and a resource all named after ``name``; a file name too."""
    steps = [
        {"id": f"{name}a", "duration": 1, "demand": {"cpu": 1, name: 1}, "meta": {"command": "true"}},
        {"id": f"{name}b", "duration": 2, "demand": {"cpu": 2}, "meta": {"command": "true"}},
    ]
    document = {
        "machines": [{"name": name, "capacity": {"cpu": 2, name: 1}}],
        "workflows": [{"id": name, "meta": {"tier": name}, "tasks": steps}],
    }
    path = tmp / f"in{name.replace('/', '_')}.json"
    path.write_text(json.dumps(document))
    return path


def answers(tmp: Path, name: str) -> Path:
    """Two sources named after ``name``: one safe answer, one that overflows the cpu."""
    path = tmp / f"ans{name.replace('/', '_')}.jsonl"
    records = [
        {"workflow": name, "machine": name, "source": name, "starts": {f"{name}a": 0, f"{name}b": 1}},
        {"workflow": name, "machine": name, "source": f"{name}2", "starts": {f"{name}a": 0, f"{name}b": 0}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def run(*args: str) -> tuple[int, str, str]:
    """``peakopt ARGS...``: exit code, stdout, stderr (with the exception, if one escaped)."""
    result = CliRunner().invoke(cli, list(args))
    escaped = "" if result.exception is None else repr(result.exception)
    return result.exit_code, result.stdout, result.stderr + escaped


def ok(result: tuple[int, str, str], *shown: str) -> str:
    """stdout and stderr of a command that succeeded, each of ``shown`` printed literally."""
    code, out, err = result
    assert code == 0, err
    assert "Traceback" not in err and "MarkupError" not in err
    for text in shown:
        assert text in err + out, f"{text!r} not shown literally:\n{err}"
    return out + err


#: The command table over every name is slow (a dozen commands each): three run in the quick tier.
QUICK = [name if k < 3 else pytest.param(name, marks=pytest.mark.slow) for k, name in enumerate(NAMES)]


@pytest.mark.parametrize("name", QUICK)
def test_every_command_shows_names_literally(tmp_path: Path, name: str) -> None:
    path, refs, scores = str(suite(tmp_path, name)), str(tmp_path / "refs.jsonl"), str(tmp_path / "s.jsonl")
    ok(run("validate", path))
    ok(run("schedule", path, "--method", "asap"), name)
    ok(run("solve", path, "-o", refs))
    ok(run("score", path, "-s", str(answers(tmp_path, name)), "-r", refs, "-o", scores), name)
    # the leaderboard, the summary (grouped by every name) and the file name in the title
    ok(run("report", scores, "--by", "machine,workflow,tier"), name, f"{name}2", Path(scores).name)
    ok(run("report", scores, "--table-format", "latex"))
    import markdown  # Python-Markdown (mkdocs'): the Markdown export reads back as the name itself

    exported = ok(run("report", scores, "--by", "machine", "--table-format", "md"))
    assert html.escape(name, quote=False) in markdown.markdown(exported, extensions=["tables"])
    page = tmp_path / "r.html"
    ok(run("report", scores, "--suite", path, "-r", refs, "-o", str(page)))
    text = page.read_text()
    assert html.escape(name) in text
    if "<script>" in name:
        assert "<script>" not in text
    ok(run("plot", path, "--method", "asap", "--optimal", "-r", refs, "-o", str(tmp_path / "p.png")))
    store = str(tmp_path / "st.sqlite")
    ok(
        run("stress", path, "-m", "asap,serial", "--db", store, "-r", refs, "-j", "1", "--by", "machine"),
        name,
    )
    ok(run("report", store, "--by", "machine,workflow"), name)


@pytest.mark.parametrize("name", ["[/bold]", "m[red]x", ":smile:", "$x^2$"])
def test_trace_scoring_shows_names_literally(tmp_path: Path, name: str) -> None:
    path, trace = str(suite(tmp_path, name)), str(tmp_path / "trace.json")
    ok(run("run", path, "--machine", name, "-o", trace))
    ok(run("score", trace, "--by", "source,machine,workflow"), name)


def rows_of(names: list[str]) -> list[ScoreRow]:
    """Rows of several sources on two pairs, one source with a failed run."""
    return [
        ScoreRow(
            workflow=f"{name}{pair}",
            machine=name,
            source=name,
            tier=name,
            valid=k != 1,
            safe=k != 1,
            makespan=2.0,
            efficiency=0.0 if k == 1 else 1.0 / (k + 1),
            reason_kinds=[] if k != 1 else ["error"],
            reasons=[] if k != 1 else [f"{name} raised"],
        )
        for k, name in enumerate(names)
        for pair in ("p", "q")
    ]


def rendered(*tables: Any) -> str:
    out = io.StringIO()
    found = console()
    found.file = out
    for table in tables:
        found.print(table)
    return out.getvalue()


#: Short printable text (no control characters: a table lays out lines); markup characters often.
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("[]/\\<>&$_:*|#"), st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
    ),
    min_size=1,
    max_size=10,
).filter(lambda s: s.strip() == s)


@settings(max_examples=60, deadline=None)
@given(names=st.lists(TEXT, min_size=2, max_size=3, unique=True))
@example(names=["*a*", "x|y"]).via("Markdown emphasis, a cell's end")
@example(names=["<b>q", "`c`", "[/bold]"]).via("HTML, code, rich markup")
def test_tables_and_progress_show_any_name_literally(names: list[str]) -> None:
    rows = rows_of(names)
    found = summaries(rows, ("source", "machine", "tier"))
    text = rendered(
        *board_tables(board(rows)),
        report_table(found, f"report of {names[0]}"),
        score_table(found, gaps=True, title=names[0]),
        errors_table(rows),
    )
    for name in names:
        assert name in text
    import markdown

    page = markdown.markdown(exports.markdown(report_table(found, names[0])), extensions=["tables"])
    for name in names:
        assert html.escape(name, quote=False) in page
    with progress_bar(console(), names[0], names[1]) as bar:
        out = io.StringIO()
        bar.console.file = out
        task = bar.add_task(names[1], total=2)
        bar.update(task, advance=1, description=names[1])
    assert names[1] in out.getvalue()


def texts(fig: Any) -> list[Any]:
    """Every text artist of a figure, legends' and tick labels' included (drawn first)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    return list(fig.findobj(Text))


@pytest.mark.parametrize("name", NAMES)
def test_pictures_draw_names_literally(name: str) -> None:
    from peakopt.models import Machine, Schedule, Workflow
    from peakopt.oracle import evaluate
    from peakopt.plots.charts import gap_profile, group_bars, makespan_vs_cva
    from peakopt.plots.schedule_plot import Drawn, figure

    rows = [r.model_copy(update={"reference_status": "optimal", "gap": 0.0}) for r in rows_of([name, "b"])]
    workflow = Workflow(id=name, tasks=[{"id": name, "duration": 1, "demand": {name: 1}, "tool": name}])
    machine = Machine(name=name, capacity={name: 1})
    schedule = Schedule(workflow=name, machine=name, starts={name: 0.0}, source=name)
    drawn = [Drawn(name, schedule, evaluate(workflow, machine, schedule), None)]
    pictures = [
        gap_profile(rows),
        makespan_vs_cva(rows),
        group_bars(rows, "tier"),
        figure(workflow, machine, drawn),
    ]
    for fig in pictures:
        assert fig is not None
        found = texts(fig)  # drawing reads any mathtext: ``$\\frac{$`` would fail here
        naming = [t for t in found if name in t.get_text()]
        assert naming, f"{name!r} is not on the picture"
        assert all(not t.get_parse_math() for t in naming)
    for fig in pictures[:3]:  # the charts' legends name every source, ``_hidden`` too
        labels = [
            t.get_text()
            for legend in [*fig.legends, *(a.get_legend() for a in fig.axes)]
            if legend
            for t in legend.get_texts()
        ]
        assert any(label.startswith(name) for label in labels), labels


def _calls(module: Path, name: str) -> list[ast.Call]:
    tree = ast.parse(module.read_text())
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    ]


def test_rich_output_is_built_in_one_place() -> None:
    """A new call site cannot regress: consoles come from ``messages.console``, text columns are literal."""
    for module in [*ROOT.glob("cli/*.py"), *ROOT.glob("plots/*.py")]:
        consoles = _calls(module, "Console")
        assert not consoles or module.name == "messages.py", f"{module.name} builds its own Console"
        for call in _calls(module, "TextColumn"):
            literal = [k for k in call.keywords if k.arg == "markup"]
            assert literal and getattr(literal[0].value, "value", True) is False, (
                f"{module.name}:{call.lineno}: a TextColumn reads markup"
            )
        assert not _calls(module, "from_markup"), f"{module.name} reads markup"
