"""Write the pictures the docs embed: the plot of the refund workflow and two charts of the HTML report.

Run ``python docs/scripts/report_pictures.py`` after changing what the pictures draw. It runs
``peakopt plot`` and a small ``peakopt stress`` campaign (four heuristics on ``bundled:default``,
a few seconds) in a temporary folder, then draws the report's gap profile and its safe-rate bars
per tier from the store, as ``peakopt report -o`` does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from peakopt.campaign.store import read_score_rows
from peakopt.plots.charts import gap_profile, group_bars

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
METHODS = "asap,serial,best-rule,admission"


def peakopt(*args: str, cwd: Path) -> None:
    """Run the installed ``peakopt`` beside this Python (the same venv)."""
    command = [str(Path(sys.executable).with_name("peakopt")), *args]
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)


def main() -> None:
    """Write docs/refund.png, docs/report-profile.png and docs/report-bars.png."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        peakopt("plot", "bundled:refund", "--method", "asap", "--optimal", "-o", "refund.png", cwd=work)
        shutil.copyfile(work / "refund.png", DOCS / "refund.png")
        peakopt("stress", "bundled:default", "-m", METHODS, "--db", "r.sqlite", "--jobs", "1", cwd=work)
        rows = read_score_rows(work / "r.sqlite")
    pictures = {
        "report-profile.png": gap_profile(rows),
        "report-bars.png": group_bars(rows, "tier", "safe_rate"),
    }
    for name, fig in pictures.items():
        assert fig is not None, name
        fig.savefig(DOCS / name, dpi=100)
        print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()
