"""Schedule plots render to PNG, SVG and PDF, with the overflow shown when there is one."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_hex, to_rgb
from matplotlib.image import imread
from matplotlib.patches import Rectangle

from peakopt.instances import load
from peakopt.models import Machine, Schedule, Task, Workflow
from peakopt.oracle import evaluate
from peakopt.plots.schedule_plot import (
    AVOIDABLE,
    MIN_WIDTH_POINTS,
    RESERVED,
    Drawn,
    figure,
    looks_reserved,
    save_figure,
    task_palette,
)

REFUND = load("bundled:refund")
WORKFLOW, MACHINE = REFUND.workflows[0], REFUND.machines[0]
FOUR = ("lookup_order", "fraud_score", "history_scan", "policy_search")
ASAP = Schedule(workflow="refund", starts=dict.fromkeys(FOUR, 0.0) | {"decide": 4.8}, source="asap")
SAFE = Schedule(
    workflow="refund",
    starts=dict.fromkeys(FOUR, 0.0) | {"history_scan": 4.8, "decide": 8.0},
    source="optimal",
)


def drawn(*schedules: Schedule) -> list[Drawn]:
    return [Drawn(s.source or "", s, evaluate(WORKFLOW, MACHINE, s)) for s in schedules]


def red_pixels(path: Path) -> int:
    image = imread(path)
    target = tuple(int(AVOIDABLE[i : i + 2], 16) / 255 for i in (1, 3, 5))
    close = (abs(image[..., 0] - target[0]) < 0.08) & (abs(image[..., 1] - target[1]) < 0.08)
    return int((close & (abs(image[..., 2] - target[2]) < 0.08)).sum())


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_side_by_side_renders(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"refund{suffix}"
    save_figure(figure(WORKFLOW, MACHINE, drawn(ASAP, SAFE), dependencies=True), path)
    assert path.stat().st_size > 10_000
    if suffix == ".svg":
        text = path.read_text()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert 'id="overflow-avoidable-memory_mb' in text  # ASAP overflows memory
    else:
        height, width = imread(path).shape[:2]
        assert width > 1000 and height > 600
        assert red_pixels(path) > 200


@pytest.mark.slow
def test_no_overflow_panel_when_safe(tmp_path: Path) -> None:
    svg, png = tmp_path / "safe.svg", tmp_path / "safe.png"
    for path in (svg, png):
        save_figure(figure(WORKFLOW, MACHINE, drawn(SAFE)), path)
    assert "overflow-" not in svg.read_text()
    assert red_pixels(png) == 0


def test_unavoidable_overload_is_drawn_apart(tmp_path: Path) -> None:
    workflow = Workflow(
        id="w", tasks=[Task(id="big", duration=2, demand={"m": 12}), Task(id="b", duration=1)]
    )
    machine = Machine(name="x", capacity={"m": 8})
    schedule = Schedule(workflow="w", starts={"big": 0, "b": 2}, source="serial")
    path = tmp_path / "u.svg"
    save_figure(
        figure(workflow, machine, [Drawn("serial", schedule, evaluate(workflow, machine, schedule))]), path
    )
    assert 'id="overflow-unavoidable-m' in path.read_text()


@pytest.mark.slow
def test_two_hundred_steps_stay_legible(tmp_path: Path) -> None:
    rng = random.Random(7)
    tasks = [
        Task(
            id=f"step{i}",
            server=f"s{i % 9}",
            duration=round(rng.uniform(0.1, 3), 2),
            demand={"cpu": round(rng.uniform(0.1, 2), 2)},
            depends_on=[f"step{j}" for j in range(max(0, i - 12), i) if rng.random() < 0.08],
        )
        for i in range(200)
    ]
    workflow = Workflow(id="big", tasks=tasks)
    machine = Machine(name="m", capacity={"cpu": 8})
    starts: dict[str, float] = {}
    for task in tasks:  # serial, in topological (list) order
        starts[task.id] = max((starts[t.id] + t.length for t in tasks[: len(starts)]), default=0.0)
    schedule = Schedule(workflow="big", starts=starts, source="serial")
    fig = figure(workflow, machine, [Drawn("serial", schedule, evaluate(workflow, machine, schedule))])
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert 0 < len(labels) <= 40
    path = tmp_path / "big.png"
    save_figure(fig, path)
    height, _ = imread(path).shape[:2]
    assert height < 3000


def test_rejects_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
        save_figure(figure(WORKFLOW, MACHINE, drawn(SAFE)), tmp_path / "x.jpg")


def test_writes_pdf(tmp_path: Path) -> None:
    path = tmp_path / "refund.pdf"
    save_figure(figure(WORKFLOW, MACHINE, drawn(ASAP, SAFE)), path)
    assert path.read_bytes().startswith(b"%PDF-")


def test_the_task_palette_leaves_out_every_overload_colour() -> None:
    palette = task_palette()
    assert len(palette) >= 10 and len(set(palette)) == len(palette)
    assert not set(palette) & {to_hex(c) for c in RESERVED}
    # Set3's salmon and oranges, Pastel2's peach: close enough to read as overload
    assert not {"#fb8072", "#fdb462", "#fdcdac", "#f1e2cc"} & set(palette)
    for colour in palette:
        for reserved in RESERVED:
            distance = sum((a - b) ** 2 for a, b in zip(to_rgb(colour), to_rgb(reserved), strict=True))
            assert distance**0.5 > 0.25, (colour, reserved)


def test_looks_reserved() -> None:
    assert looks_reserved(AVOIDABLE) and looks_reserved("#fb8072") and looks_reserved("#ffa500")
    assert not looks_reserved("#d9d9d9") and not looks_reserved("#80b1d3") and not looks_reserved("#ccebc5")


def bars(fig: object) -> dict[str, Rectangle]:
    """The Gantt bars of the first column, by gid (``task-<id>-<segment>``)."""
    axes = fig.axes[0]  # type: ignore[attr-defined]
    return {p.get_gid(): p for p in axes.patches if (p.get_gid() or "").startswith("task-")}


@settings(max_examples=8, deadline=None)
@given(servers=st.integers(min_value=1, max_value=40))
def test_no_task_bar_is_drawn_in_an_overload_colour(servers: int) -> None:
    tasks = [Task(id=f"t{i}", server=f"server{i}", duration=1) for i in range(servers)]
    workflow = Workflow(id="w", tasks=tasks)
    machine = Machine(name="m", capacity={"cpu": 1})
    schedule = Schedule(workflow="w", starts={t.id: float(i) for i, t in enumerate(tasks)})
    fig = figure(workflow, machine, [Drawn("s", schedule, evaluate(workflow, machine, schedule))])
    found = bars(fig)
    assert len(found) == servers
    assert not any(looks_reserved(bar.get_facecolor()) for bar in found.values())


def test_a_very_short_step_stays_visible() -> None:
    # 0.01 s beside 1000 s: at its true width it would be 1/100,000 of the axis, far below a pixel
    workflow = Workflow(
        id="w",
        tasks=[
            Task(id="long", duration=1000, demand={"cpu": 1}),
            Task(id="blink", duration=0.01, demand={"cpu": 1}, depends_on=["long"]),
        ],
    )
    machine = Machine(name="m", capacity={"cpu": 1})
    schedule = Schedule(workflow="w", starts={"long": 0, "blink": 1000})
    fig = figure(workflow, machine, [Drawn("s", schedule, evaluate(workflow, machine, schedule))])
    fig.draw_without_rendering()  # the final layout: the axes' size in points is known
    found = bars(fig)
    short, long = found["task-blink-0"], found["task-long-0"]
    assert short.get_x() == 1000 and 0.01 <= short.get_width() < 10  # never narrower, never a block
    assert long.get_width() == 1000  # a long step keeps its true width
    to_points = 72 / fig.dpi
    left, right = (fig.axes[0].transData.transform((x, 0))[0] for x in (1000, 1000 + short.get_width()))
    assert (right - left) * to_points >= 0.9 * MIN_WIDTH_POINTS


def run_cli(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from peakopt.cli.main import cli

    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stderr


@pytest.mark.slow
def test_plot_command_asap_next_to_optimal(tmp_path: Path) -> None:
    out = tmp_path / "refund.svg"
    code, err = run_cli("plot", "bundled:refund", "--method", "asap", "--optimal", "-o", str(out))
    assert code == 0, err
    assert "wrote" in err and "asap, optimal" in err
    text = out.read_text()
    assert 'id="overflow-avoidable-memory_mb' in text
    assert "optimal (safe)" in text and "gap +0.0%" in text  # the optimum's own gap
    # asap overflows memory to finish in 5.4 s: unsafe, and no (negative) gap to the 8.6 s optimum
    assert "asap (unsafe)" in text and "gap -" not in text and "gap unsafe" in text


@pytest.mark.slow
def test_plot_command_keeps_option_order_and_reads_files(tmp_path: Path) -> None:
    import json

    schedules = tmp_path / "llm.jsonl"
    answer = (
        "```json\n"
        + json.dumps(
            {"schedule": [{"step": s, "start": 0} for s in FOUR] + [{"step": "decide", "start": 4.8}]}
        )
        + "\n```"
    )
    schedules.write_text(
        json.dumps({"workflow": "refund", "machine": "worker", "source": "my-llm", "response": answer}) + "\n"
    )
    out = tmp_path / "x.png"
    code, err = run_cli(
        "plot", "bundled:refund", "--schedules", str(schedules), "--method", "serial", "-o", str(out)
    )
    assert code == 0, err
    assert "my-llm, serial" in err
    assert red_pixels(out) > 200  # the LLM launched everything at once


@pytest.mark.slow
def test_plot_says_which_lines_of_a_schedules_file_it_could_not_read(tmp_path: Path) -> None:
    schedules = tmp_path / "answers.jsonl"
    good = {"workflow": "refund", "machine": "worker", "source": "me", "starts": dict.fromkeys(FOUR, 0)}
    good["starts"]["decide"] = 4.8
    schedules.write_text(json.dumps(good) + "\n" + '{"workflow": "refund", "starts": {"decide"\n')
    code, err = run_cli(
        "plot", "bundled:refund", "--schedules", str(schedules), "-o", str(tmp_path / "x.png")
    )
    assert code == 0, err
    assert f"{schedules}: line 2: not valid JSON" in err and "skipped" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bundled:default", "--method", "asap"], "pick one with --workflow ID"),
        (["bundled:default", "--workflow", "easy-000", "--method", "asap"], "pick one with --machine NAME"),
        (["bundled:default", "--workflow", "nope", "--method", "asap"], "no workflow 'nope'"),
        (["bundled:refund"], "nothing to draw"),
        (["bundled:refund", "--method", "nonsense"], "--method"),
    ],
)
def test_plot_command_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    code, err = run_cli("plot", *args, "-o", str(tmp_path / "x.png"))
    assert code == 2 and message in err
    assert not (tmp_path / "x.png").exists()


def test_plot_command_rejects_other_extensions(tmp_path: Path) -> None:
    code, err = run_cli("plot", "bundled:refund", "--method", "asap", "-o", str(tmp_path / "x.jpg"))
    assert code == 2 and ".png, .svg or .pdf" in err


def test_plot_command_writes_pdf(tmp_path: Path) -> None:
    out = tmp_path / "refund.pdf"
    code, err = run_cli("plot", "bundled:refund", "--method", "asap,serial", "-o", str(out))
    assert code == 0, err
    assert out.read_bytes().startswith(b"%PDF-")


def test_a_name_in_a_script_the_default_font_lacks_draws_without_a_warning(tmp_path: Path) -> None:
    # DejaVu Sans has no CJK glyphs: they come from a fallback font, and no glyph goes missing
    name = "日本語の手順"
    workflow = Workflow(id=name, tasks=[Task(id=name, duration=1.0, demand={"cpu": 1.0})])
    machine = Machine(name="机", capacity={"cpu": 1.0})
    schedule = Schedule(workflow=name, starts={name: 0.0}, source="源")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        panel = Drawn("源", schedule, evaluate(workflow, machine, schedule))
        save_figure(figure(workflow, machine, [panel]), tmp_path / "cjk.png")
    assert (tmp_path / "cjk.png").stat().st_size > 1000
