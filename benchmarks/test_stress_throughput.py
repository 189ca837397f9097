"""Stress campaign throughput: 3,000 generated workflows × 3 machines × 5 methods (issue 7).

The same ``peakopt stress`` command runs twice in this session, one after the
other under ``nice -n 10``: on 2 local processes, then on a 2-worker Dask
LocalCluster (work batched in chunks of instances). Each run computes 9,000
optima and scores 45,000 schedules; the figure is rows per second of wall
time, cluster start-up included. After the timed calls the stores are checked:
every row present and free of errors, every reference proven or bounded with
the best method's makespan above its lower bound, every resource-aware method
safe, and both stores row for row the same. The Dask run must keep at least
70 % of the local throughput.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from peakopt.instances import SuiteSpec, generate_suite
from peakopt.instances.native import dump

WORKFLOWS = {"easy": 1500, "medium": 1000, "hard": 500}
METHODS = ("asap", "serial", "admission", "sgs:parallel:lft", "best:fast")
ROWS = sum(WORKFLOWS.values()) * 3 * len(METHODS)
RATES: dict[str, float] = {}
RUNS = {"local": ["--jobs", "2"], "dask": ["--dask-local", "2"]}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stress") / "suite.json"
    path.write_text(json.dumps(dump(generate_suite(SuiteSpec(seed=1, counts=WORKFLOWS)))))
    return path


def campaign(suite: Path, kind: str) -> Path:
    db = suite.with_name(f"{kind}.sqlite")
    command = ["nice", "-n", "10", sys.executable, "-m", "peakopt.cli", "stress", str(suite)]
    command += ["-m", ",".join(METHODS), "--db", str(db), "--fresh", "--time-limit", "10", *RUNS[kind]]
    subprocess.run(command, check=True, capture_output=True, timeout=1800)
    return db


def query(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchall()


def check(db: Path) -> None:
    assert query(db, "SELECT COUNT(*), COUNT(error) FROM results") == [(ROWS, 0)]
    assert query(db, "SELECT COUNT(*) FROM refs WHERE status IN ('optimal', 'feasible')") == [(ROWS // 5,)]
    best = query(
        db,
        """SELECT COUNT(*) FROM results r JOIN refs f USING (instance, machine)
           WHERE r.method = 'best:fast' AND r.makespan < f.lower_bound - 1e-6""",
    )
    assert best == [(0,)], "a schedule beat a proven lower bound"
    unsafe = query(db, "SELECT COUNT(*) FROM results WHERE method NOT IN ('asap') AND NOT safe")
    assert unsafe == [(0,)]
    below = query(db, "SELECT COUNT(*) FROM results WHERE safe AND gap < -1e-9")
    assert below == [(0,)], "a safe schedule beat the proven optimum"


@pytest.mark.parametrize("kind", list(RUNS))
def test_campaign_throughput(benchmark: BenchmarkFixture, suite: Path, kind: str) -> None:
    load = os.getloadavg()[0]
    began = time.perf_counter()
    db = benchmark.pedantic(campaign, args=(suite, kind), rounds=1, iterations=1)
    RATES[kind] = ROWS / (time.perf_counter() - began)
    benchmark.extra_info.update(rows=ROWS, rows_per_second=round(RATES[kind]), load_before=load)
    check(db)


def test_dask_keeps_most_of_the_local_throughput(suite: Path) -> None:
    assert set(RATES) == set(RUNS), "run the whole module: the two campaigns come first"
    local, dask = (
        query(suite.with_name(f"{k}.sqlite"), "SELECT workflow, machine_name, method, row FROM results")
        for k in RUNS
    )
    assert sorted(local) == sorted(dask)  # the same rows, whichever executor
    share = RATES["dask"] / RATES["local"]
    print(f"\nrows/s: local {RATES['local']:.0f}, Dask {RATES['dask']:.0f} ({share:.0%})")
    assert RATES["dask"] >= 0.7 * RATES["local"]
