"""Filling a step of a workflow file with a measured task: the step changes, the rest of the file does not."""

from __future__ import annotations

import json
from pathlib import Path

from peakopt.models import Task
from peakopt.runtime.fill import filled, read_document

MEASURED = Task(id="b", duration=1.25, demand={"memory_mb": 64.0}, meta={"command": "python b.py"})

# a suite as a person writes it: four-space indents, a compact machine and step, a key order
# of their own, a non-ASCII name, a blank line
TEXT = """{
    "machines": [{"name": "box", "capacity": {"cpu": 2, "memory_mb": 300}}],

    "workflows": [
        {
            "id": "w",
            "tasks": [
                {"id": "a", "duration": 9, "demand": {"memory_mb": 1}, "tool": "café"},
                {
                    "id": "b",
                    "depends_on": ["a"],
                    "duration": 9,
                    "demand": {"memory_mb": 1},
                    "meta": {"owner": "ops"}
                },
                {"depends_on": ["b"], "id": "c", "duration": 1}
            ]
        }
    ]
}
"""


def written(tmp_path: Path, text: str, step: str, task: Task) -> tuple[Path, str]:
    path = tmp_path / "suite.json"
    path.write_text(text, encoding="utf-8")
    return path, filled(read_document(path), step, task, path)


def test_only_the_filled_step_changes_in_the_files_own_layout(tmp_path: Path) -> None:
    _, text = written(tmp_path, TEXT, "b", MEASURED)
    before, after = TEXT.splitlines(), text.splitlines()
    # everything before and after step b's object is the file's text, byte for byte
    assert after[:8] == before[:8] and after[-5:] == before[-5:]
    step = "\n".join(after[8:-5])
    assert step.startswith('                {\n                    "id": "b",')  # its indentation kept
    assert step.endswith("\n                },")
    b = json.loads(text)["workflows"][0]["tasks"][1]
    assert b["depends_on"] == ["a"] and b["duration"] == 1.25 and b["demand"] == {"memory_mb": 64.0}
    assert b["meta"] == {"owner": "ops", "command": "python b.py"}


def test_a_one_line_step_stays_on_one_line(tmp_path: Path) -> None:
    _, text = written(tmp_path, TEXT, "c", MEASURED.model_copy(update={"id": "c"}))
    before, after = TEXT.splitlines(), text.splitlines()
    assert len(after) == len(before)
    assert [a == b for a, b in zip(after, before, strict=True)].count(False) == 1
    line = after[15]
    assert line.startswith(
        '                {"depends_on": ["b"], "id": "c", "duration": 1.25'
    ) and line.endswith("}")
    assert json.loads(text)["workflows"][0]["tasks"][2]["depends_on"] == ["b"]


def test_a_workflow_file_keeps_its_two_space_layout(tmp_path: Path) -> None:
    document = {"id": "w", "tasks": [{"id": "a", "duration": 9}, {"id": "b", "duration": 9}]}
    original = json.dumps(document, indent=2) + "\n"
    _, text = written(tmp_path, original, "b", MEASURED)
    assert text.splitlines()[:6] == original.splitlines()[:6]
    assert json.loads(text)["tasks"][1]["duration"] == 1.25 and json.loads(text)["tasks"][0] == {
        "id": "a",
        "duration": 9,
    }


def test_a_tab_indented_step_keeps_its_tabs(tmp_path: Path) -> None:
    original = '{\n\t"id": "w",\n\t"tasks": [\n\t\t{\n\t\t\t"id": "b",\n\t\t\t"duration": 9\n\t\t}\n\t]\n}\n'
    _, text = written(tmp_path, original, "b", MEASURED)
    step = '\t\t{\n\t\t\t"id": "b",\n\t\t\t"duration": 1.25,\n\t\t\t"demand": {\n\t\t\t\t"memory_mb"'
    assert text.startswith('{\n\t"id": "w",\n\t"tasks": [\n' + step)
    assert text.endswith("\n\t\t}\n\t]\n}\n")
