"""Workers never import the command line: what is pickled to them, and what a fresh Dask worker loads."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import worker_probe
from click.testing import CliRunner

from peakopt.campaign import dask_pool, pools
from peakopt.cli import solve as solve_cli
from peakopt.cli.main import cli

#: Unpickles stdin in a fresh interpreter and prints the peakopt modules that took.
UNPICKLE = (
    "import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
    "print(' '.join(sorted(m for m in sys.modules if m.startswith('peakopt.'))))"
)


def imported_by(payload: Any) -> set[str]:
    """The peakopt modules a fresh worker imports to unpickle ``payload`` (its callables, its items)."""
    found = subprocess.run(
        [sys.executable, "-c", UNPICKLE], input=pickle.dumps(payload), capture_output=True, check=True
    )
    return set(found.stdout.decode().split())


@pytest.mark.slow
def test_the_probe_sees_a_command_line_callable() -> None:
    assert "peakopt.cli.solve" in imported_by(solve_cli.solve_all)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every (function, arguments) a pool sends to its workers, and each Dask worker's modules at the end."""
    found: list[tuple[Any, ...]] = []
    for kind in (pools.LocalPool, dask_pool.DaskPool):
        submit = kind.submit

        def recording(self: Any, func: Any, *args: Any, submit: Any = submit) -> Any:
            found.append((func, *args))
            return submit(self, func, *args)

        monkeypatch.setattr(kind, "submit", recording)
    close = dask_pool.DaskPool.close

    def probing(self: dask_pool.DaskPool, now: bool) -> None:
        found.append(("dask workers", self.client.run(worker_probe.modules)))
        close(self, now)

    monkeypatch.setattr(dask_pool.DaskPool, "close", probing)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("where", [["--jobs", "1"], ["--dask-local", "1"]], ids=["local", "dask"])
def test_solve_and_stress_send_their_workers_nothing_of_the_command_line(
    tmp_path: Path, where: list[str], sent: list[tuple[Any, ...]]
) -> None:
    runner = CliRunner()
    solve = runner.invoke(cli, ["solve", "bundled:refund", *where, "-o", str(tmp_path / "refs.jsonl")])
    assert solve.exit_code == 0, solve.stderr
    db = str(tmp_path / "r.sqlite")
    stress = runner.invoke(cli, ["stress", "bundled:refund", "-m", "serial", *where, "--db", db])
    assert stress.exit_code == 0, stress.stderr
    submitted = [s for s in sent if s[0] != "dask workers"]
    assert len(submitted) >= 2  # a solve and a stress item at least
    loaded = imported_by(submitted)
    assert {"peakopt.campaign.solves", "peakopt.campaign.stress"} <= loaded
    assert not {m for m in loaded if m.startswith("peakopt.cli")}, loaded
    if where[0] == "--dask-local":  # a fresh process: what it imported, it imported for the work
        workers = [modules for s in sent if s[0] == "dask workers" for modules in s[1].values()]
        assert len(workers) == 2  # one worker, once per command
        for modules in workers:
            assert "peakopt.campaign.executors" in modules
            assert not [m for m in modules if m.startswith("peakopt.cli")]
