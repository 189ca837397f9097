"""Where inputs come from: directories expand to their input files; pipes, symlinks, bundled names."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from paths import J30, PATTERSON

from peakopt.instances import InputError, bundled, expand, load, read_text


@contextmanager
def pipe(data: bytes) -> Iterator[str]:
    """A real pipe holding ``data``, as ``/dev/fd/N`` (what ``<(cat file)`` hands a program)."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as out:
            out.write(data)  # more than a pipe buffer blocks until read: hence the thread

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        yield f"/dev/fd/{read_end}"
    finally:
        writer.join()
        os.close(read_end)


@pytest.mark.parametrize(
    "source", [J30 / "j301_1.sm", PATTERSON / "pat1.rcp", bundled("refund"), bundled("default")]
)
def test_every_format_reads_from_a_pipe(source: Path) -> None:
    with pipe(source.read_bytes()) as path:
        suite = load(path)
    assert suite.workflows[0].tasks == load(source).workflows[0].tasks
    assert suite.machines[0].capacity == load(source).machines[0].capacity


def test_a_fifo_is_opened_once(tmp_path: Path) -> None:
    fifo = tmp_path / "input.sm"
    os.mkfifo(fifo)
    text = (J30 / "j301_1.sm").read_bytes()
    done = threading.Event()
    reopened: list[bool] = []

    def feed() -> None:
        with fifo.open("wb") as out:  # blocks until the reader opens it
            out.write(text)
        # a reader that opens it again would wait for a writer for ever: be that
        # writer, with nothing to say, so that it fails instead of hanging
        while not done.wait(0.01):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                continue  # nobody is waiting to read
            reopened.append(True)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        suite = load(fifo)
    finally:
        done.set()
        writer.join()
    assert not reopened
    assert suite.workflows[0].id == "input" and len(suite.workflows[0].tasks) == 30


def test_a_directory_is_its_input_files_in_sorted_order(tmp_path: Path) -> None:
    for name in ("b.json", "a.sm", "c.jsonl", "notes.txt", ".hidden.json", "Z.RCP"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub.json").mkdir()
    (tmp_path / "sub.json" / "deep.json").write_text("x")
    expanded = expand([str(tmp_path), "bundled:refund", "missing.json"])
    names = [Path(f).name for f in expanded.files[:-2]]
    assert names == ["Z.RCP", "a.sm", "b.json", "c.jsonl"]  # as the shell sorts DIR/*
    assert expanded.files[-2:] == ("bundled:refund", "missing.json")  # read (or refused) by the reader


def test_psplib_result_tables_are_skipped_not_read() -> None:
    expanded = expand([J30])
    assert len(expanded.files) == 480
    assert sorted(Path(p).name for p in expanded.skipped) == ["j30hrs.sm", "j30opt.sm"]
    assert len(expand([PATTERSON]).files) == 110


def test_an_empty_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("no inputs here")
    with pytest.raises(InputError, match="is a directory without input files"):
        expand([tmp_path])
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "j30opt.sm").write_bytes((J30 / "j30opt.sm").read_bytes())
    with pytest.raises(InputError, match="skipped 1 PSPLIB result table"):
        expand([tables])


def test_symlink_loop_and_broken_symlink_say_so(tmp_path: Path) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    broken = tmp_path / "broken.json"
    broken.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(InputError, match="is a symlink loop"):
        read_text(loop)
    with pytest.raises(InputError, match="is a symlink loop"):
        read_text(loop / "inside.json")
    with pytest.raises(InputError, match=r"is a broken symlink \(to .*nowhere.json"):
        read_text(broken)
    with pytest.raises(InputError, match="no such file"):
        read_text(tmp_path / "absent.json")
    assert expand([loop]).files == (str(loop),)  # not a directory: the reader says what it is
