"""The results store's file: another program's database is refused untouched, old stores, locks."""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stress_helpers import env, small_suite, table

from peakopt.campaign import storage
from peakopt.campaign.storage import COLUMNS, SQLITE_HEADER, is_store_path
from peakopt.campaign.store import Store
from peakopt.cli.main import cli
from peakopt.instances import InputError

SIDE_FILES = ("", "-wal", "-shm", "-journal")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def state(path: Path) -> dict[str, bytes]:
    """The file and its side files, byte for byte (absent ones absent)."""
    return {end: Path(f"{path}{end}").read_bytes() for end in SIDE_FILES if Path(f"{path}{end}").exists()}


def journal_mode(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])


def database(path: Path, statements: list[str], mode: str = "delete") -> None:
    """Another program's database: its statements, then closed (no side file left)."""
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode={mode}")
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def schema_1(path: Path) -> None:
    """A store as peakopt wrote it before schema 2 (no ``code`` column, no ``format`` row)."""
    db = sqlite3.connect(path)
    for name, columns in COLUMNS.items():
        kept = [c for c in columns if not (name == "results" and c == "code")]
        db.execute(f"CREATE TABLE {name} ({', '.join(kept)})")
    db.execute("INSERT INTO meta VALUES ('schema', '1')")
    db.commit()
    db.close()


USERS = ["CREATE TABLE users (id, name)", "INSERT INTO users VALUES (1, 'ada')"]
PEAKOPT_META = "INSERT INTO meta VALUES ('format', 'peakopt results store'), ('schema', '2')"

# name, how to make the file, what the refusal says
FOREIGN: list[tuple[str, Callable[[Path], object], str]] = [
    (
        "another program's tables",
        lambda p: database(p, USERS),
        "its tables: users",
    ),
    (
        "another program's tables, WAL mode",
        lambda p: database(
            p, ["CREATE TABLE users (id, name)", "INSERT INTO users VALUES (1, 'ada')"], "wal"
        ),
        "its tables: users",
    ),
    (
        "peakopt's table names, other columns",
        lambda p: database(p, ["CREATE TABLE meta (k, v)", "CREATE TABLE results (a, b)"]),
        "its tables: meta, results",
    ),
    (
        "a key-value meta table of another program",
        lambda p: database(
            p,
            ["CREATE TABLE meta (key TEXT, value TEXT)", "INSERT INTO meta VALUES ('schema', '1')"],
            "wal",
        ),
        "its tables: meta",
    ),
    (
        "a meta table that says peakopt over tables that are not",
        lambda p: database(
            p,
            ["CREATE TABLE meta (key TEXT, value TEXT)", PEAKOPT_META, "CREATE TABLE results (x)"],
        ),
        "table 'instances' is not peakopt's",
    ),
    (
        "a database without tables",
        lambda p: database(p, ["PRAGMA user_version = 7"]),
        "a SQLite database without any table",
    ),
    ("a JSON Lines file", lambda p: p.write_text('{"workflow": "w"}\n'), "not a SQLite database"),
    (
        "SQLite's header over garbage",
        lambda p: p.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 20),
        "is not a peakopt results store",
    ),
]


@pytest.mark.parametrize(("name", "make", "says"), FOREIGN, ids=[c[0] for c in FOREIGN])
@pytest.mark.parametrize("fresh", [False, True])
def test_another_programs_file_is_refused_and_left_as_it_was(
    tmp_path: Path, name: str, make: Callable[[Path], None], says: str, fresh: bool
) -> None:
    db = tmp_path / "theirs.sqlite"
    make(db)
    before = state(db)
    args = ["stress", "bundled:refund", "-m", "serial", "--db", str(db), "--jobs", "1"]
    code, _, err = run(*args, *(["--fresh"] if fresh else []))
    assert code == 1, err
    assert err.startswith(f"Error: {db}: is not a peakopt results store") and says in err, err
    assert len(err.splitlines()) == 1
    assert state(db) == before  # not a byte changed, no -wal or -shm made
    code, _, err = run("report", str(db))
    assert code == 1 and err.startswith(f"Error: {db}: is not a peakopt results store"), err
    assert state(db) == before
    if before[""].startswith(SQLITE_HEADER) and "garbage" not in name:
        # read last: a plain connection may add side files
        assert journal_mode(db) == ("wal" if "WAL" in name or "key-value" in name else "delete")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["meta", "results", "refs", "instances", "users", "search", "data"]),
            st.lists(st.sampled_from(["key", "value", "instance", "machine", "x", "row"]), min_size=1),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda t: t[0],
    ),
    st.sampled_from(["delete", "wal", "truncate"]),
    st.booleans(),
)
def test_no_foreign_schema_passes_for_a_store(
    tables: list[tuple[str, list[str]]], mode: str, fresh: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "theirs.db"
        database(
            db, [f"CREATE TABLE {name} ({', '.join(dict.fromkeys(cols))})" for name, cols in tables], mode
        )
        before = state(db)
        with pytest.raises(InputError, match="is not a peakopt results store"):
            Store(db, fresh=fresh)
        with pytest.raises(InputError, match="is not a peakopt results store"):
            Store(db, read_only=True)
        assert state(db) == before


def test_a_new_path_and_an_empty_file_become_stores(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    for path in (tmp_path / "new.sqlite", empty):
        Store(path).close()
        assert table(path, "SELECT key, value FROM meta ORDER BY key") == [
            ("format", "peakopt results store"),
            ("peakopt", version("peakopt")),  # who last wrote it: a report's provenance
            ("schema", "2"),
        ]
        assert journal_mode(path) == "wal"
        Store(path).close()  # and open again as a store


def test_a_schema_1_store_is_refused_until_fresh_and_still_reported(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    schema_1(db)
    before = state(db)
    code, _, err = run("stress", "bundled:refund", "-m", "serial", "--db", str(db), "--jobs", "1")
    assert code == 1 and "schema 1" in err and "--fresh" in err and len(err.splitlines()) == 1
    assert state(db) == before
    code, _, err = run("report", str(db), "--json")
    assert code == 0, err  # read-only, an old store is still read
    assert re.search(r"│ oracle\s*│ not recorded", err), err  # schema 1 kept no code
    assert state(db) == before
    code, _, err = run("stress", "bundled:refund", "-m", "serial", "--db", str(db), "--jobs", "1", "--fresh")
    assert code == 0, err
    assert table(db, "SELECT value FROM meta WHERE key = 'schema'") == [("2",)]
    assert table(db, "SELECT COUNT(*) FROM results WHERE code LIKE 'peakopt.heuristics:%'") == [(1,)]


LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
while db.execute("SELECT COUNT(*) FROM results").fetchone()[0] < int(sys.argv[2]):
    time.sleep(0.01)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()  # held until the test closes stdin
"""


def lock(db: Path, after_rows: int = 0) -> subprocess.Popen[str]:
    """A second process that takes the store's write lock once it has ``after_rows`` rows."""
    return subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(db), str(after_rows)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def release(locker: subprocess.Popen[str]) -> None:
    assert locker.stdin is not None and locker.stdout is not None
    locker.stdin.close()
    locker.wait(30)
    locker.stdout.close()  # else the collector finds the pipe open (a ResourceWarning)


@pytest.mark.slow
def test_a_store_locked_at_start_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "LOCK_WAIT", 0.3)
    db = tmp_path / "r.sqlite"
    assert run("stress", "bundled:refund", "-m", "serial", "--db", str(db), "--jobs", "1")[0] == 0
    rows = table(db, "SELECT * FROM results")
    locker = lock(db)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        code, _, err = run("stress", "bundled:refund", "-m", "serial,asap", "--db", str(db), "--jobs", "1")
        assert code == 1
        assert err.startswith(f"Error: {db}: is locked by another process") and len(err.splitlines()) == 1
        code, _, err = run("report", str(db), "--json")  # readers never wait for a writer
        assert code == 0, err
    finally:
        release(locker)
    assert table(db, "SELECT * FROM results") == rows


@pytest.mark.slow
def test_a_store_locked_mid_run_stops_the_run_and_keeps_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage, "LOCK_WAIT", 0.3)
    suite, db = small_suite(tmp_path / "suite.json", workflows=12), tmp_path / "r.sqlite"
    args = [
        "stress",
        str(suite),
        "-m",
        "stress_helpers:crawl",
        "--db",
        str(db),
        "--jobs",
        "1",
        "--chunk",
        "1",
    ]
    Store(db).close()
    locker = lock(db, after_rows=3)
    try:
        code, _, err = run(*args)
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
    finally:
        release(locker)
    assert code == 1, err
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert errors == [errors[-1]] and f"{db}: is locked by another process" in errors[0]
    assert err.rstrip().endswith(errors[0]) and "Traceback" not in err
    kept = table(db, "SELECT COUNT(*) FROM results")[0][0]
    assert 3 <= kept < 36 and table(db, "PRAGMA integrity_check") == [("ok",)]
    code, _, err = run(*args)
    assert code == 0 and f"resuming: {kept} rows already" in err, err
    assert table(db, "SELECT COUNT(*) FROM results") == [(36,)]


def test_report_reads_a_locked_writer_s_store_and_never_writes(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    assert run("stress", "bundled:refund", "-m", "serial", "--db", str(db), "--jobs", "1")[0] == 0
    locker = lock(db)  # a writer holding the store open: -wal and -shm exist
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        assert run("report", str(db), "--json")[0] == 0
    finally:
        release(locker)


@pytest.mark.parametrize(
    ("name", "store"),
    [("r.sqlite", True), ("r.DB", True), ("scores.jsonl", False), ("scores", False)],
)
def test_store_paths_by_name_or_header(tmp_path: Path, name: str, store: bool) -> None:
    path = tmp_path / name
    path.write_text('{"a": 1}\n')
    assert is_store_path(path) == store
    path.write_bytes(b"SQLite format 3\x00")
    assert is_store_path(path)


@pytest.mark.slow
def test_a_directory_and_a_missing_store_are_one_error_line(tmp_path: Path) -> None:
    code, _, err = run("stress", "bundled:refund", "-m", "serial", "--db", str(tmp_path))
    assert code == 1 and err == f"Error: {tmp_path}: is not a peakopt results store (a directory)\n"
    done = subprocess.run(
        [sys.executable, "-m", "peakopt.cli", "report", str(tmp_path / "x.sqlite")],
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stderr == f"Error: {tmp_path / 'x.sqlite'}: does not exist\n"


def test_a_store_s_rows_come_in_suite_order_whatever_order_they_were_written(tmp_path: Path) -> None:
    # with -j 2 results arrive as workers finish; the seeded bootstrap resamples by position, so
    # the rows are read in suite order (workflow, machine, then as written) for equal intervals
    suite = tmp_path / "suite.json"
    assert run("generate", "--easy", "6", "--medium", "4", "--hard", "0", "-o", str(suite))[0] == 0
    ordered = tmp_path / "ordered.sqlite"
    code, _, err = run("stress", str(suite), "-m", "serial,asap", "--db", str(ordered), "-j", "1", "-q")
    assert code == 0, err
    shuffled = tmp_path / "shuffled.sqlite"
    shutil.copy(ordered, shuffled)
    with sqlite3.connect(shuffled) as db:
        kept = db.execute("SELECT * FROM results ORDER BY rowid").fetchall()
        db.execute("DELETE FROM results")
        marks = ", ".join("?" * len(kept[0]))
        db.executemany(f"INSERT INTO results VALUES ({marks})", random.Random(3).sample(kept, len(kept)))
    reports = [run("report", str(db), "--json") for db in (ordered, shuffled)]
    assert all(code == 0 for code, _, _ in reports), reports
    # summaries and leaderboard, digit for digit (the last document, the provenance, names each store)
    assert reports[0][1].splitlines()[:-1] == reports[1][1].splitlines()[:-1]
    for method in ("serial", "asap"):  # each method's rows in the order of one worker
        order = [
            (r.workflow, r.machine) for r in Store(ordered, read_only=True).score_rows() if r.source == method
        ]
        again = [
            (r.workflow, r.machine)
            for r in Store(shuffled, read_only=True).score_rows()
            if r.source == method
        ]
        assert order == again and len(order) == 30
