"""Write the Evaluation Report of the eval's README (evals/README.md) from real Inspect logs.

The baselines anyone can reproduce offline — the oracle solver (the self-check: efficiency 1.000)
and the three trivial answers (the floor) on both splits of the bundled default suite — are run
through ``inspect eval`` from the command line, as a user types it (``mockllm/model``: neither
solver calls the model), and ``peakopt report LOGS --table-format eval-report`` writes the section
from their logs. The section replaces the README's from its heading to the end of the file.

    python docs/scripts/eval_report.py           # run the eight evaluations, rewrite the section (~2 min)
    python docs/scripts/eval_report.py --check   # exit 1, writing nothing, when the section differs

``--check`` compares with the dates, times and the oracle's digest masked: they change with every
run and every change of the oracle's code, the figures and commands do not.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "evals" / "README.md"
HEADING = "## Evaluation Report"
#: The solvers of the baselines, with their arguments.
SOLVERS = (
    ("peakopt/oracle",),
    ("peakopt/trivial", "-S", "answer=asap"),
    ("peakopt/trivial", "-S", "answer=serial"),
    ("peakopt/trivial", "-S", "answer=zero"),
)
SPLITS = ((), ("-T", "split=hard"))
# what changes from run to run: a date (and time), the oracle's digest
_VARYING = re.compile(r"\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\dZ)?|(?<=oracle )[0-9a-f]{16}")


def masked(text: str) -> str:
    """``text`` with its dates, times and the oracle's digest as ``…``."""
    return _VARYING.sub("…", text)


def section(cache: Path, logs: Path) -> str:
    """The Evaluation Report the baselines' logs give, made by running them (offline)."""
    env = dict(os.environ, PEAKOPT_CACHE=str(cache), HF_HUB_OFFLINE="1", NO_COLOR="1")
    bin_dir = Path(sys.executable).parent
    for split in SPLITS:
        for solver in SOLVERS:
            command = [str(bin_dir / "inspect"), "eval", "peakopt/schedule", "--model", "mockllm/model"]
            command += [*split, "--solver", *solver, "--log-dir", str(logs), "--display", "none"]
            # cwd: away from a checkout, whose peakopt.egg-info would hide the installed package's
            # metadata from Inspect (it would record the task without its "peakopt/" namespace)
            subprocess.run(command, env=env, check=True, capture_output=True, text=True, cwd=logs.parent)
    found = sorted(str(p) for p in logs.glob("*.eval"))
    report = [str(bin_dir / "peakopt"), "report", *found, "--table-format", "eval-report", "-q"]
    return subprocess.run(report, env=env, check=True, capture_output=True, text=True, cwd=logs.parent).stdout


#: What the section says under its heading, before the generated table.
INTRO = """
Baselines that need no model, so anyone can reproduce them offline: the oracle solver (the
end-to-end self-check: efficiency 1.000 on every proven pair) and the trivial answers (the floor
`peakopt validate --stats` prints), on the bundled default suite (references solved by CP-SAT,
every one proven optimal), both splits. This section is written by
`python docs/scripts/eval_report.py`, which runs the commands below and then
`peakopt report LOGS --table-format eval-report`; the docs test checks it.
"""
#: What follows the generated part.
OUTRO = """
A model's figures come from its logs: `peakopt report logs/*.eval --table-format eval-report`
writes this section for them, and `peakopt report logs/*.eval -o report.html` the leaderboard
with intervals, the floor and the worst cases.
"""


def with_section(readme: str, made: str) -> str:
    """The README with its Evaluation Report (its heading to the end) replaced by ``made``'s."""
    head, found, _old = readme.partition(HEADING)
    _, heading, body = made.partition(HEADING)
    if not found or not heading:
        raise SystemExit(f"{README}: no '{HEADING}' heading")
    return head + HEADING + "\n" + INTRO + "\n" + body.lstrip("\n") + OUTRO


def main(argv: list[str] | None = None) -> int:
    """Run the baselines and rewrite (or ``--check``) the README's section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 when it differs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        made = section(Path(work) / "cache", Path(work) / "logs")
    readme = README.read_text(encoding="utf-8")
    wanted = with_section(readme, made)
    if args.check:
        if masked(wanted) != masked(readme):
            print(f"{README}: the Evaluation Report differs from what the logs give", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
