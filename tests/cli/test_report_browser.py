"""The HTML report in a real browser: headless Chromium (Debian's package) driven by Playwright."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from matplotlib.image import imread
from playwright.sync_api import ConsoleMessage, sync_playwright

from peakopt.campaign.provenance import oracle_identity, peakopt_version
from peakopt.cli.main import cli

# every test here starts a headless Chromium
pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("PEAKOPT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    # the machine has no network: no background calls home
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
METHODS = ("asap", "serial", "best-rule", "admission")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not Path(CHROMIUM).exists():  # fail, never skip: CI installs it (.ci/run)
        raise RuntimeError(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set PEAKOPT_CHROMIUM")
    folder = tmp_path_factory.mktemp("report")
    runner = CliRunner()
    suite = folder / "suite.json"
    assert runner.invoke(cli, ["generate", "--seed", "5", "-o", str(suite)]).exit_code == 0
    db = folder / "results.sqlite"
    args = ["stress", str(suite), "-m", ",".join(METHODS), "--db", str(db), "--jobs", "1"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    html = folder / "report.html"
    result = runner.invoke(cli, ["report", str(db), "-o", str(html), "--worst", "2"])
    assert result.exit_code == 0, result.output
    return html


def test_report_is_self_contained(report: Path) -> None:
    text = report.read_text()
    assert "http://" not in text and "https://" not in text  # no network needed
    assert text.count("<img") >= 6


def test_report_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1300, "height": 900})

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                problems.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(report.as_uri(), wait_until="load")
        images = page.evaluate(
            "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
        summary = page.evaluate(
            "Array.from(document.querySelectorAll('#summary tbody tr')).map(r => r.cells[0].textContent)"
        )
        captions = page.evaluate(
            "Array.from(document.querySelectorAll('figcaption')).map(c => c.textContent)"
        )
        # asap overflows: its unsafe answers are listed among the worst cases, with their overload
        failing = page.evaluate(
            "Array.from(document.querySelectorAll('#worst ~ #failing tbody tr'))"
            ".map(r => r.cells[3].textContent)"
        )
        # four methods: the page opens with their leaderboard, one standing each
        sections = page.evaluate("Array.from(document.querySelectorAll('h2')).map(h => h.textContent)")
        standings = page.evaluate(
            "Array.from(document.querySelectorAll('#leaderboard ~ #standings tbody tr'))"
            ".map(r => [Number(r.cells[0].textContent), r.cells[1].textContent])"
        )
        # where the figures come from, visible: the report's code and date, and each input's
        made = page.evaluate("document.querySelector('#made').innerText")
        provenance = page.evaluate(
            "Array.from(document.querySelectorAll('#provenance tbody td')).filter(c => c.offsetWidth > 0)"
            ".map(c => c.textContent)"
        )
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert problems == []
    assert images and all(done and width > 0 and height > 0 for done, width, height in images)
    # every table in the leaderboard's order, ranks ascending
    assert sections[0] == "Leaderboard" and sorted(source for _, source in standings) == sorted(METHODS)
    assert [rank for rank, _ in standings] == sorted(rank for rank, _ in standings)
    assert summary == [source for _, source in standings]
    assert sections[-1] == "Inputs" and "results store" in provenance
    assert f"oracle {oracle_identity()}" in made and f"peakopt {peakopt_version()}" in made
    assert any(c.startswith("Gap profile: share of pairs") for c in captions)
    assert any("95 % bootstrap confidence intervals" in c for c in captions)
    assert failing and set(failing) <= {"unsafe", "invalid"}
    pixels = imread(shot)
    assert pixels.shape[0] > 2000  # the whole page, not one screen
    assert pixels[..., :3].std() > 0.05  # not blank
