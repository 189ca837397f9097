"""The results store's SQLite file: what counts as a store, and how it is opened.

Nothing is written to a file before it is known to be a peakopt results store or a new one:

- a path that does not exist, or an empty file (0 bytes), is a new store;
- a SQLite database whose ``meta`` table says ``format`` = :data:`FORMAT` is a store, of the
  version its ``schema`` row gives (its tables must then have the columns of that version);
- a store of schema 1 (written before rows carried their method's code identity) has no
  ``format`` row: it is recognised by its ``schema`` row and its exact tables;
- anything else — another program's database, tables with peakopt's names but another shape,
  a file that is not SQLite — is refused with ``is not a peakopt results store`` and left as it
  was: no table added or dropped (not even with ``--fresh``), its journal mode unchanged, no
  ``-wal`` or ``-shm`` file created (it is only ever opened read-only).

Readers (``peakopt report``) open the file read-only and never write; writers take the write
lock before they write anything, waiting :data:`LOCK_WAIT` seconds for another process's lock,
and then say that the store is locked instead of failing halfway.
"""

from __future__ import annotations

import importlib.metadata
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from peakopt.instances import InputError

#: The ``meta`` row ``format`` of every store.
FORMAT = "peakopt results store"

#: The store version written; schema 2 added the method's code identity to every result row.
SCHEMA_VERSION = "2"

#: Seconds a command waits for another process's write lock on the store before it gives up.
LOCK_WAIT = 30.0

#: The first bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"

#: File names that say "a SQLite database" (``peakopt report`` then never reads them as JSON Lines).
SUFFIXES = (".sqlite", ".sqlite3", ".db", ".db3")

_STATEMENTS = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE instances (
    instance TEXT PRIMARY KEY, workflow TEXT NOT NULL, tier TEXT, tasks INTEGER NOT NULL,
    document TEXT NOT NULL)""",
    "CREATE TABLE machines (machine TEXT PRIMARY KEY, name TEXT NOT NULL, document TEXT NOT NULL)",
    """CREATE TABLE refs (
    instance TEXT NOT NULL, machine TEXT NOT NULL, status TEXT NOT NULL, makespan REAL,
    lower_bound REAL, exact INTEGER NOT NULL, seconds REAL NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (instance, machine))""",
    """CREATE TABLE results (
    instance TEXT NOT NULL, machine TEXT NOT NULL, method TEXT NOT NULL, params TEXT NOT NULL,
    code TEXT NOT NULL, workflow TEXT NOT NULL, machine_name TEXT NOT NULL, tier TEXT,
    valid INTEGER NOT NULL, safe INTEGER NOT NULL, makespan REAL, cva REAL, avoidable_cva REAL,
    strict_mru REAL, safe_mru REAL, gap REAL, gap_vs_lb REAL, gap_vs_ub REAL,
    reference_status TEXT, reference_makespan REAL, reference_lower_bound REAL,
    seconds REAL NOT NULL, error TEXT, row TEXT NOT NULL, finished REAL NOT NULL,
    PRIMARY KEY (instance, machine, method, params))""",
    """CREATE TABLE search (
    instance TEXT NOT NULL, machine TEXT NOT NULL, method TEXT NOT NULL, params TEXT NOT NULL,
    gap REAL, evaluation INTEGER NOT NULL, mutations TEXT NOT NULL, row TEXT,
    PRIMARY KEY (instance, machine, method, params))""",
)

#: Tables added after schema 2 without changing what a store of schema 2 is: created where
#: missing when a store is opened for writing, checked where present, dropped by ``fresh``.
#: ``bounds``: the perfect-information bound per realised scenario (:mod:`peakopt.campaign.hindsight`).
_OPTIONAL = (
    """CREATE TABLE bounds (
    key TEXT PRIMARY KEY, status TEXT NOT NULL, makespan REAL, lower_bound REAL NOT NULL,
    source TEXT NOT NULL, time_limit REAL NOT NULL, seconds REAL NOT NULL, starts TEXT NOT NULL)""",
)


def _tables(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """The database's tables and their columns, in order."""
    names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {
        name: tuple(c for _, c, *_ in db.execute("SELECT * FROM pragma_table_info(?)", (name,)))
        for name in names
        if not name.startswith("sqlite_")
    }


def _expected(statements: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    db = sqlite3.connect(":memory:")
    for statement in statements:
        db.execute(statement)
    found = _tables(db)
    db.close()
    return found


#: Columns of every table of the current schema.
COLUMNS = _expected(_STATEMENTS)

#: Columns of the optional tables (see ``_OPTIONAL``).
OPTIONAL_COLUMNS = _expected(_OPTIONAL)

#: Schema 1 was schema 2 without the results' ``code`` column.
_SCHEMA_1 = {**COLUMNS, "results": tuple(c for c in COLUMNS["results"] if c != "code")}


def not_a_store(path: str | Path, why: str) -> InputError:
    """The one error of every file that is not a results store."""
    return InputError(path, "", f"is not a peakopt results store ({why})")


def locked(path: str | Path) -> InputError:
    """The error of a store another process holds the write lock of."""
    return InputError(
        path,
        "",
        f"is locked by another process (no write access within {LOCK_WAIT:g} s); "
        "the rows already in it are kept: run the same command again once it is free",
    )


def _busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"its tables: {shown}"


def identify(db: sqlite3.Connection, path: str | Path) -> str | None:
    """The store schema of an open database; None when it has no table at all.

    Raises
    ------
    InputError
        When the database is not a peakopt results store (see the module docstring).
    """
    tables = _tables(db)
    if not tables:
        return None
    if tables.get("meta", ())[:2] != ("key", "value"):
        raise not_a_store(path, _listing(sorted(tables)))
    meta = {str(k): str(v) for k, v in db.execute("SELECT key, value FROM meta")}
    schema = meta.get("schema", "")
    if meta.get("format") == FORMAT:
        if schema != SCHEMA_VERSION:
            raise InputError(
                path,
                "",
                f"is a peakopt results store of schema {schema!r}, newer than this peakopt "
                f"(schema {SCHEMA_VERSION}): upgrade peakopt to use it",
            )
        wrong = [t for t in COLUMNS if tables.get(t) != COLUMNS[t]]
        wrong += [t for t, columns in OPTIONAL_COLUMNS.items() if tables.get(t, columns) != columns]
        if wrong:
            raise not_a_store(path, f"its meta table says so, but table {wrong[0]!r} is not peakopt's")
        return schema
    if schema == "1" and tables == _SCHEMA_1:
        return schema
    raise not_a_store(path, _listing(sorted(tables)))


def _header(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(100)
    except IsADirectoryError:
        raise not_a_store(path, "a directory") from None
    except OSError as exc:
        raise InputError(path, "", f"cannot be read ({exc.strerror})") from None


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing, not even a ``-wal`` or ``-shm`` file.

    A database in WAL mode without its ``-wal`` file has no connection open (the last one
    to close checkpoints into the main file and deletes the ``-wal``): the main file holds
    everything, and ``immutable=1`` reads it as it is. A plain read-only open would create
    ``-wal`` and ``-shm`` files and leave them behind, and fails where the folder is read-only.
    With a ``-wal`` file (a writer has it open, or one was killed), the read-only connection
    follows SQLite's reader protocol and sees every committed row.

    Raises
    ------
    InputError
        When the file does not exist, cannot be read or is not a SQLite database.
    """
    source = Path(path)
    if not source.exists():
        raise InputError(path, "", "does not exist")
    header = _header(source)
    if not header.startswith(SQLITE_HEADER):
        raise not_a_store(path, "not a SQLite database" if header else "an empty file")
    # byte 18 is the file format's write version: 2 means WAL mode
    immutable = header[18:19] == b"\x02" and not Path(f"{source}-wal").exists()
    uri = source.absolute().as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        return sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT)
    except sqlite3.Error as exc:
        raise InputError(path, "", f"cannot be opened ({exc})") from None


def read_schema(db: sqlite3.Connection, path: str | Path) -> str | None:
    """:func:`identify`, with SQLite's own errors (a damaged file, a lock) as one :class:`InputError`."""
    try:
        return identify(db, path)
    except sqlite3.Error as exc:
        if _busy(exc):
            raise locked(path) from None
        raise not_a_store(path, str(exc)) from None


def _check(path: Path, schema: str | None, fresh: bool) -> None:
    if schema not in (None, SCHEMA_VERSION) and not fresh:
        raise InputError(
            path,
            "",
            f"is a peakopt results store of schema {schema}, before rows carried their method's "
            f"code identity (schema {SCHEMA_VERSION}): start it over with --fresh, or use a new file",
        )


def connect_read_write(path: str | Path, *, fresh: bool = False) -> sqlite3.Connection:
    """A connection to a new or existing store (schema created, WAL mode), after checking it is one.

    Parameters
    ----------
    path
        The file; created when missing.
    fresh
        Drop the store's tables (and only those) and create them anew.

    Raises
    ------
    InputError
        When the file is not a peakopt results store (it is then left untouched), is a store
        of another schema (unless ``fresh``), cannot be opened, or stays locked.
    """
    source = Path(path)
    if source.exists() and (source.stat().st_size or Path(f"{source}-wal").exists()):
        reader = connect_read_only(source)
        try:
            schema = read_schema(reader, source)
        finally:
            reader.close()
        if schema is None:  # another program's database, with nothing in it yet
            raise not_a_store(source, "a SQLite database without any table")
        _check(source, schema, fresh)
    try:
        db = sqlite3.connect(source, timeout=LOCK_WAIT, isolation_level=None)
    except sqlite3.Error as exc:
        raise InputError(path, "", f"cannot be opened ({exc})") from None
    try:
        # checked again under the write lock: another process may have made the file meanwhile
        with transaction(db, source):
            schema = read_schema(db, source)
            _check(source, schema, fresh)
            if schema is None or fresh:
                for table in [*COLUMNS, *OPTIONAL_COLUMNS] if schema is not None else ():
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _STATEMENTS:
                    db.execute(statement)
                db.executemany(
                    "INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("schema", SCHEMA_VERSION)]
                )
            for statement in _OPTIONAL:
                db.execute(statement.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
            # the version that last wrote: a report's provenance (schema 1 and 2 stores lack it)
            db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('peakopt', ?)", (importlib.metadata.version("peakopt"),)
            )
        # WAL: readers never wait for the campaign; NORMAL: a killed process loses no commit
        with _errors(source):
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
    except BaseException:
        db.close()
        raise
    return db


@contextmanager
def _errors(path: Path) -> Iterator[None]:
    """SQLite errors as one :class:`InputError`: the lock, or why the file cannot be written."""
    try:
        yield
    except sqlite3.Error as exc:
        if _busy(exc):
            raise locked(path) from None
        if "unable to open" in str(exc):
            raise InputError(path, "", f"cannot be opened ({exc})") from None
        raise InputError(path, "", f"cannot be written ({exc})") from None


@contextmanager
def transaction(db: sqlite3.Connection, path: str | Path) -> Iterator[None]:
    """One write transaction that takes the write lock first (``BEGIN IMMEDIATE``).

    A store locked by another process then fails before anything is written, after
    :data:`LOCK_WAIT` seconds, with :func:`locked`'s message; everything committed before stays.
    """
    source = Path(path)
    with _errors(source):
        db.execute("BEGIN IMMEDIATE")
    try:
        with _errors(source):
            yield
            db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def is_store_path(path: str | Path) -> bool:
    """Whether ``path`` should be read as a results store: a store's name, or a SQLite file."""
    source = Path(path)
    if source.suffix.lower() in SUFFIXES:
        return True
    try:
        with source.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False
