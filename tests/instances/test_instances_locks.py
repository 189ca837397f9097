"""Lock files: a waiter gets the lock its holder let go, and nothing is left behind."""

from __future__ import annotations

import threading
from pathlib import Path

from peakopt.instances import locks


def test_a_waiter_takes_the_lock_after_its_holder_and_no_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    order: list[str] = []
    first = locks.take(path, wait=True)
    assert first is not None
    assert locks.take(path, wait=False) is None  # held: refused at once
    assert locks.holder(path).startswith(" (pid ")

    def waiter() -> None:
        with locks.held(path):
            order.append("waiter")

    thread = threading.Thread(target=waiter)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and not order  # still waiting for the holder
    order.append("holder")
    locks.release(path, first)
    thread.join(10)
    assert order == ["holder", "waiter"]
    assert list(tmp_path.iterdir()) == []
