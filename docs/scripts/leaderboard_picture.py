"""Write docs/report-leaderboard.png: the Leaderboard section of an HTML report, in headless Chromium.

Run ``python docs/scripts/leaderboard_picture.py`` after changing what the section shows. It
evaluates three stand-in models with Inspect's ``mockllm`` (each answers every prompt of
``peakopt/schedule`` with one of peakopt's heuristics: serial, best-rule and asap, on twelve
samples of ``bundled:default``; offline, a few seconds), writes ``peakopt report -o`` of the three
logs in a temporary folder, and photographs its leaderboard as the browser test opens the page
(Chromium from ``PEAKOPT_CHROMIUM`` or the PATH, driven by Playwright).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "docs" / "report-leaderboard.png"
METHODS = ("serial", "best-rule", "asap")
CHROMIUM = os.environ.get("PEAKOPT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def stand_in(method: str) -> Any:
    """A mockllm output function that answers with ``method``'s schedule (as docs/benchmark.md's example)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    from peakopt.instances import load
    from peakopt.solver.heuristics import run

    suite = load("bundled:default")

    def answer(messages: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        context = json.loads(messages[-1].text.split("Context:\n")[1].split("\n\n")[0])
        workflow = suite.workflow(context["workflow_id"])
        machine = suite.machine(context["machine"]["name"])
        starts = run(workflow, machine, method).starts
        text = json.dumps({"schedule": [{"step": s, "start": t} for s, t in starts.items()]})
        output = ModelOutput.from_content(method, text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return answer


def main() -> None:
    """Evaluate the stand-ins, write their report, and photograph its Leaderboard section."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        os.environ["PEAKOPT_CACHE"] = str(work / "cache")
        for method in METHODS:
            model = get_model(f"mockllm/{method}", custom_outputs=stand_in(method))
            task_args = {"limit": 12, "seed": 1}
            inspect_eval("peakopt/schedule", model=model, task_args=task_args, log_dir=str(work / "logs"))
        logs = sorted(str(p) for p in (work / "logs").glob("*.eval"))
        page_path = work / "report.html"
        peakopt = str(Path(sys.executable).with_name("peakopt"))
        subprocess.run([peakopt, "report", *logs, "-o", str(page_path), "-q"], check=True)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1000, "height": 800})
            page.goto(page_path.as_uri(), wait_until="load")
            page.add_style_tag(content="body { padding: 0 16px; }")  # a margin inside the picture
            top = page.locator("h1").bounding_box()
            bottom = page.locator("#differences").bounding_box()
            assert top is not None and bottom is not None
            height = bottom["y"] + bottom["height"] + 16 - top["y"]
            clip = {"x": 0, "y": top["y"] - 8, "width": 1000, "height": height}
            page.screenshot(path=str(PICTURE), clip=clip, full_page=True)
            browser.close()
    print(f"wrote {PICTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
