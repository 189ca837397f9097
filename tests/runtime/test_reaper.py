"""The reaper (peakopt.runtime.reaper): what it ends when its pipe closes, and what it leaves alone."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

from peakopt.runtime.reaper import MARK_PREFIX, Reaper, _update


def sleeper(env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A ``sleep 120`` in a session (and process group) of its own."""
    return subprocess.Popen(["sleep", "120"], start_new_session=True, env=env)


def alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


def test_only_complete_lines_change_the_listed_groups() -> None:
    groups: set[int] = set()
    _update(groups, [b"+12", b"+13", b"-12", b"junk", b"+", b"+-4", b"+ 5", b"", b"+0", b"+1"])
    assert groups == {13}


def test_closing_ends_the_watched_groups_and_the_marked_processes_only() -> None:
    reaper = Reaper(grace=1.0)
    reaper.start()
    watched = sleeper()  # no marker: found by its group
    marked = sleeper(reaper.env)  # a group never told: found by its marker
    forgotten = sleeper()  # told, then forgotten: not the reaper's any more
    other = sleeper()  # never told
    reaper.watch(watched.pid)
    reaper.watch(forgotten.pid)
    reaper.forget(forgotten.pid)
    try:
        reaper.close()  # waits for the reaper, which waits for what it ends
        for proc in (watched, marked):
            proc.wait(timeout=10)  # reaped here: it was our child
        assert watched.returncode is not None and marked.returncode is not None
        assert alive(forgotten) and alive(other)
    finally:
        for proc in (watched, marked, forgotten, other):
            proc.kill()
            proc.wait()


def test_a_torn_last_line_is_left_out() -> None:
    spared = sleeper()
    try:
        reaper = subprocess.Popen(
            [sys.executable, "-m", "peakopt.runtime.reaper", "0" * 16, "1.0"],
            stdin=subprocess.PIPE,
            start_new_session=True,
        )
        assert reaper.stdin is not None
        reaper.stdin.write(f"+{spared.pid}".encode())  # the writer died before the newline
        reaper.stdin.close()
        assert reaper.wait(timeout=30) == 0
        assert alive(spared)
    finally:
        spared.kill()
        spared.wait()


def test_the_marker_names_the_run() -> None:
    one, two = Reaper(1.0), Reaper(1.0)
    assert one.mark.startswith(MARK_PREFIX) and one.mark != two.mark
    assert one.env[one.mark] == "1" and one.env["PATH"] == os.environ["PATH"]
    assert psutil.Process().environ().get(one.mark) is None  # this process is not marked
