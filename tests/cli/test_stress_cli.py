"""peakopt stress through the command line: failing plug-ins, --worst, Dask, the store, usage errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import dask
import pytest
from click.testing import CliRunner
from stress_helpers import small_suite, table

from peakopt.campaign import stress as campaign
from peakopt.campaign.store import read_score_rows
from peakopt.cli.main import cli
from peakopt.instances import load
from peakopt.oracle import ScoreRow, evaluate, with_reference
from peakopt.solver import solve
from peakopt.solver.heuristics import run as run_method

FAILING = {
    "stress_helpers:raises": "raised RuntimeError: plug-in bug",
    "stress_helpers:garbage": "returned str, expected a Schedule",
    "stress_helpers:sleeps": "still running after the 0.2 s limit",
    "stress_helpers:spins": "still running after the 0.2 s limit",
    "stress_helpers:crashes": "worker lost: a worker process died",
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_suite(tmp_path_factory.mktemp("suite") / "suite.json", workflows=6)


@pytest.mark.slow
def test_failing_plugins_become_error_rows_and_the_campaign_goes_on(tmp_path: Path) -> None:
    suite, db = small_suite(tmp_path / "suite.json", workflows=2), tmp_path / "r.sqlite"
    methods = ",".join(["admission", *FAILING])
    code, out, err = run(
        "stress", str(suite), "-m", methods, "--db", str(db), "--method-limit", "0.2", "--json"
    )
    assert code == 0, err
    rows = table(db, "SELECT method, error, valid, safe, gap FROM results")
    assert len(rows) == 2 * 3 * (1 + len(FAILING))
    for method, error, valid, safe, gap in rows:
        if method == "admission":
            assert error is None and valid and safe and gap is not None and gap >= -1e-9
        else:
            assert FAILING[method] in error and not valid and gap is None
    summary = {s["group"]["source"]: s for s in json.loads(out)}
    assert summary["admission"]["errors"] == 0 and summary["admission"]["safe_rate"] == 1.0
    assert all(summary[m]["errors"] == 6 for m in FAILING)
    errors = err[err.index("\nerrors") :]  # the table of reasons under the summary
    for method, reason in FAILING.items():
        assert method in errors and reason in errors


def test_rerun_skips_finished_rows_and_fresh_starts_over(tmp_path: Path, suite: Path) -> None:
    db = tmp_path / "r.sqlite"
    assert run("stress", str(suite), "-m", "serial", "--db", str(db), "--jobs", "1")[0] == 0
    first = table(db, "SELECT rowid, finished FROM results")
    code, _, err = run("stress", str(suite), "-m", "serial,asap", "--db", str(db), "--jobs", "1")
    assert code == 0 and "resuming: 18 rows already" in err
    assert table(db, "SELECT rowid, finished FROM results WHERE method = 'serial'") == first
    assert table(db, "SELECT COUNT(*) FROM refs") == [(18,)]  # each optimum solved once, reused for asap
    code, _, err = run("stress", str(suite), "-m", "asap", "--db", str(db), "--fresh", "--jobs", "1")
    assert code == 0 and "resuming" not in err
    assert table(db, "SELECT DISTINCT method FROM results") == [("asap",)]


def test_reference_file_is_reused_instead_of_solving(tmp_path: Path) -> None:
    suite, refs, db = tmp_path / "suite.json", tmp_path / "refs.jsonl", tmp_path / "r.sqlite"
    small_suite(suite, workflows=3)
    assert run("solve", str(suite), "-o", str(refs), "--workers", "1")[0] == 0
    lines = [json.loads(line) for line in refs.read_text().splitlines()]
    for line in lines:
        line["solver"] = "from-the-file"
    refs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run("stress", str(suite), "-m", "serial", "--db", str(db), "-r", str(refs), "--jobs", "1")[0] == 0
    solvers = {json.loads(text)["solver"] for (text,) in table(db, "SELECT result FROM refs")}
    assert solvers == {"from-the-file"}


def test_worst_export_reproduces_the_gap(tmp_path: Path, suite: Path) -> None:
    db, out = tmp_path / "r.sqlite", tmp_path / "worst"
    args = ["-m", "serial,sgs:serial:spt", "--db", str(db), "--worst", "2", "--worst-dir", str(out)]
    code, _, err = run("stress", str(suite), *args)
    assert code == 0, err
    files = sorted(out.glob("*/*.json"))
    assert [f.parent.name for f in files] == ["serial", "serial", "sgs_serial_spt", "sgs_serial_spt"]
    stored = {(r.workflow, r.machine, r.source): r.gap for r in read_score_rows(db)}
    worst_serial = max(g for (_, _, m), g in stored.items() if m == "serial" and g is not None)
    for path in files:
        case = load(path)
        meta = json.loads(path.read_text())["meta"]["stress"]
        workflow, machine = case.workflows[0], case.machines[0]
        reference = solve(workflow, machine, time_limit=10, workers=1)
        schedule = run_method(workflow, machine, meta["method"], seed=meta["seed"])
        score = with_reference(evaluate(workflow, machine, schedule), reference)
        assert score.safe and score.gap == pytest.approx(meta["gap"])
        assert score.gap == pytest.approx(stored[(workflow.id, machine.name, meta["method"])])
    first = json.loads(files[0].read_text())["meta"]["stress"]
    assert first["gap"] == pytest.approx(worst_serial)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_results(tmp_path: Path, suite: Path) -> None:
    local, dask = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    methods = "serial,admission,stress_helpers:raises"
    assert run("stress", str(suite), "-m", methods, "--db", str(local), "--jobs", "2")[0] == 0
    code, _, err = run(
        "stress", str(suite), "-m", methods, "--db", str(dask), "--dask-local", "2", "--chunk", "4"
    )
    assert code == 0, err
    assert "Dask LocalCluster, 2 workers" in err

    def rows(db: Path) -> dict[tuple[str | None, ...], dict[str, object]]:
        return {(r.workflow, r.machine, r.source): r.model_dump() for r in read_score_rows(db)}

    assert rows(dask) == rows(local)
    assert len(rows(dask)) == 6 * 3 * 3


@pytest.mark.slow
def test_solve_on_a_dask_local_cluster(tmp_path: Path) -> None:
    out = tmp_path / "refs.jsonl"
    code, _, err = run("solve", "bundled:refund", "--dask-local", "1", "-o", str(out))
    assert code == 0, err
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["status"] == "optimal" and record["makespan"] == pytest.approx(8.6)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["-m", "serial,asap", "--search", "5"], 2),
        (["-m", "serial", "--jobs", "2", "--dask-local", "2"], 2),
        (["-m", "serial", "--jobs", "0"], 2),
        (["-m", "serial", "--time-limit", "0"], 2),
        (["-m", ""], 2),
        (["-m", "no-such-method"], 1),
        (["-m", "nowhere:function"], 1),
    ],
)
def test_usage_and_input_errors(tmp_path: Path, args: list[str], code: int) -> None:
    found, _, err = run("stress", "bundled:refund", "--db", str(tmp_path / "r.sqlite"), *args)
    assert found == code
    if code == 1:
        assert err.startswith("Error: ") and len(err.splitlines()) == 1


def test_a_file_that_is_not_a_store_is_one_error_line(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    db.write_text("just text, not SQLite\n" * 100)
    code, _, err = run("stress", "bundled:refund", "-m", "serial", "--db", str(db))
    assert code == 1 and err.startswith("Error: ") and "not a peakopt results store" in err


@pytest.mark.slow
def test_unreachable_scheduler_is_one_error_line(tmp_path: Path) -> None:
    args = ["-m", "serial", "--db", str(tmp_path / "r.sqlite"), "--scheduler", "tcp://127.0.0.1:9"]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code, _, err = run("stress", "bundled:refund", *args)
    assert code == 1 and err.startswith("Error: cannot start Dask") and len(err.splitlines()) == 1


@pytest.mark.slow
def test_stress_on_a_running_cluster_by_its_scheduler_address(tmp_path: Path, suite: Path) -> None:
    from distributed import LocalCluster

    local, remote = tmp_path / "local.sqlite", tmp_path / "remote.sqlite"
    assert run("stress", str(suite), "-m", "admission", "--db", str(local), "--jobs", "1")[0] == 0
    with LocalCluster(  # type: ignore[no-untyped-call]  # distributed types only part of its API
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        args = ["-m", "admission", "--db", str(remote), "--scheduler", cluster.scheduler_address]
        code, _, err = run("stress", str(suite), *args)
        assert code == 0, err
        assert f"Dask scheduler {cluster.scheduler_address}" in err

    def rows(db: Path) -> dict[tuple[str | None, ...], ScoreRow]:
        return {(r.workflow, r.machine, r.source): r for r in read_score_rows(db)}

    assert rows(remote) == rows(local) and len(rows(local)) == 18


def test_a_store_in_a_missing_folder_is_one_error_line(tmp_path: Path) -> None:
    code, _, err = run("stress", "bundled:refund", "-m", "serial", "--db", str(tmp_path / "no" / "r.sqlite"))
    assert code == 1 and err.startswith("Error: ") and "cannot be opened" in err


def test_a_changed_plugin_is_run_again_and_redo_runs_one_method_again(
    tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin, db = tmp_path / "plug_stale.py", tmp_path / "r.sqlite"
    body = "def f(w, m):\n    return {{t.id: {start} + 100 * i for i, t in enumerate(w.tasks)}}\n"
    args = ["stress", str(suite), "-m", "plug_stale:f,serial", "--db", str(db), "--jobs", "1"]

    def again(start: str) -> tuple[int, str, str]:
        plugin.write_text(body.format(start=start))  # a new process would import it anew
        sys.modules.pop("plug_stale", None)
        campaign._method.cache_clear()
        return run(*args)

    def rows(method: str) -> list[tuple[object, ...]]:
        sql = (
            f"SELECT workflow, machine_name, makespan, finished, code FROM results WHERE method = '{method}'"
        )
        return sorted(table(db, sql))

    assert again("0")[0] == 0
    plug, serial, refs = rows("plug_stale:f"), rows("serial"), table(db, "SELECT * FROM refs")
    assert len(plug) == len(serial) == 18
    assert all(isinstance(r[4], str) and r[4].startswith("plugin:") for r in plug)
    code, _, err = again("0")  # the same code: nothing to run
    assert code == 0 and "resuming: 36 rows already" in err and rows("plug_stale:f") == plug

    code, _, err = again("1000")  # an edit of the plug-in: its rows only are run again
    assert code == 0, err
    assert "resuming: 18 rows already in" in err and "18 to run (18 made by other code" in err
    changed = rows("plug_stale:f")
    assert all(new[2] == old[2] + 1000 and new[4] != old[4] for new, old in zip(changed, plug, strict=True))
    assert rows("serial") == serial and table(db, "SELECT * FROM refs") == refs

    code, _, err = run(*args, "--redo", "serial")
    assert code == 0, err
    redone = rows("serial")
    assert [r[:3] for r in redone] == [r[:3] for r in serial]
    assert all(new[3] > old[3] for new, old in zip(redone, serial, strict=True))  # written anew
    assert rows("plug_stale:f") == changed and table(db, "SELECT * FROM refs") == refs
    assert table(db, "SELECT COUNT(*) FROM results") == [(36,)]
    sys.modules.pop("plug_stale", None)


def test_redo_names_a_method_of_the_campaign(tmp_path: Path) -> None:
    args = ["stress", "bundled:refund", "-m", "serial", "--db", str(tmp_path / "r.sqlite")]
    code, _, err = run(*args, "--redo", "asap")
    assert code == 2 and "--redo asap: not among the --method names" in err
    assert not (tmp_path / "r.sqlite").exists()
