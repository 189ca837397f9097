"""How fast ``peakopt`` starts (issue 13 item 5, issue 25 item 7): ``--help`` within 3× ``import click``.

Every command's own ``--help`` is timed too (:data:`HELPS`, one per command of
:data:`peakopt.cli.main.COMMANDS`) and held to the same bound: it imports none of
the heavy libraries, nor pydantic and the models (``tests/models/test_extras.py`` checks
both per command; see the docs' benchmarks page).

Run with ``python -m pytest benchmarks/test_startup.py`` (asserts the ratio) or
``python benchmarks/test_startup.py`` (prints the figures). Both commands are
timed side by side in one session, alternating, so that a busy machine slows
them alike; each figure is the median of the rounds, in fresh interpreters.

The group imports a command only when it runs (:mod:`peakopt.cli.main`):
``--help``, ``--version`` and ``validate`` import no OR-Tools, matplotlib,
pandas, NumPy or Dask.

Measured (2 cores, other suites running, hyperfine -N, 15 runs): before the
lazy group, ``import click`` 58.8 ms, ``peakopt --help`` 1.491 s (25×),
``--version`` 1.800 s, ``validate bundled:refund`` 1.674 s; after it, see
the docs' benchmarks page.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.cli.main import COMMANDS as PEAKOPT_COMMANDS

#: The console script beside this interpreter, else the module.
SCRIPT = shutil.which("peakopt", path=str(Path(sys.executable).parent))
PEAKOPT = [SCRIPT] if SCRIPT else [sys.executable, "-m", "peakopt.cli"]

#: The yardstick, the commands measured against it, and the most each may take relative to it.
CLICK = [sys.executable, "-c", "import click"]
COMMANDS: dict[str, tuple[list[str], float | None]] = {
    "--help": ([*PEAKOPT, "--help"], 3.0),
    "--version": ([*PEAKOPT, "--version"], 3.0),
    # validate reads its inputs (pydantic, the models, networkx): measured, not held to a bound
    "validate": ([*PEAKOPT, "validate", "bundled:refund"], None),
}
#: Every command's --help, and the most each may take relative to ``import click``.
HELPS: dict[str, tuple[list[str], float | None]] = {
    f"{name} --help": ([*PEAKOPT, name, "--help"], 3.0) for name in PEAKOPT_COMMANDS
}
ROUNDS = 15


def seconds(command: list[str]) -> float:
    """Wall time of one run, in a fresh process."""
    began = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - began


def side_by_side(command: list[str], rounds: int = ROUNDS) -> tuple[float, float]:
    """Median wall times of ``import click`` and of ``command``, run alternately."""
    seconds(CLICK), seconds(command)  # warm the file cache
    yardstick, measured = [], []
    for _ in range(rounds):
        yardstick.append(seconds(CLICK))
        measured.append(seconds(command))
    return statistics.median(yardstick), statistics.median(measured)


@pytest.mark.parametrize("name", [name for name, (_, bound) in COMMANDS.items() if bound])
def test_startup_within_its_bound_of_importing_click(name: str) -> None:
    command, bound = COMMANDS[name]
    click, measured = side_by_side(command)
    assert bound is not None and measured <= bound * click, f"{name}: {measured:.3f} s, click {click:.3f} s"


@pytest.mark.parametrize("name", HELPS)
def test_a_commands_help_within_its_bound_of_importing_click(name: str) -> None:
    command, bound = HELPS[name]
    click, measured = side_by_side(command, rounds=7)
    assert bound is not None and measured <= bound * click, f"{name}: {measured:.3f} s, click {click:.3f} s"


def test_help(benchmark: BenchmarkFixture) -> None:
    benchmark.pedantic(seconds, args=(COMMANDS["--help"][0],), rounds=5, iterations=1)


if __name__ == "__main__":
    for name, (command, bound) in {**COMMANDS, **HELPS}.items():
        click, measured = side_by_side(command)
        print(
            f"peakopt {name:18} {1000 * measured:7.1f} ms   import click {1000 * click:6.1f} ms   "
            f"ratio {measured / click:4.2f}" + (f" (at most {bound:g})" if bound else "")
        )
