"""The one runner: each result written before it is yielded, failures as results, lost items split."""

from __future__ import annotations

import os
import time

from peakopt.campaign.executors import Where, open_executor
from peakopt.campaign.pools import send_to_parent
from peakopt.campaign.runner import Work, run_work

#: An item: a tuple of parts; the part 7 kills its worker, the part 3 raises.
Item = tuple[int, ...]


def total(item: Item) -> int:
    """The sum of the parts' squares; each part says so to the parent first."""
    for part in item:
        send_to_parent(("part", part))
        if part == 7:
            os._exit(3)
        if part == 3:
            raise ValueError("three is wrong")
    return sum(p * p for p in item)


def failed(item: Item, why: str) -> int:
    return -1 if why.startswith("worker lost") else -2


def split(item: Item) -> list[Item]:
    return [(part,) for part in item]


WORK: Work[Item, int] = Work(total, lambda _: 30.0, failed, split)


def test_every_result_is_written_before_it_is_yielded_and_reported() -> None:
    written: list[tuple[Item, int]] = []
    reported: list[tuple[Item, int]] = []
    items: list[Item] = [(1, 2), (4,), (5, 6), (8,)]
    yielded: list[int] = []
    with open_executor(Where(jobs=2)) as executor:
        for result in run_work(
            executor,
            WORK,
            items,
            lambda i, r: written.append((i, r)),
            progress=lambda i, r: reported.append((i, r)),
        ):
            assert written[-1][1] == result and len(written) == len(yielded) + 1
            yielded.append(result)
    assert sorted(written) == sorted((i, sum(p * p for p in i)) for i in items)
    assert reported == written


def test_a_raising_item_fails_alone_and_a_lost_one_is_split_to_find_the_culprit() -> None:
    found: dict[Item, int] = {}
    items: list[Item] = [(1, 7, 2), (3,), (4,)]
    with open_executor(Where(jobs=1)) as executor:
        list(run_work(executor, WORK, items, found.__setitem__, chunk=3))
    # the chunk of all three was lost with its worker: each item ran again alone; (1, 7, 2),
    # lost again, was split into its parts, and only the part 7 fails
    assert found == {(1,): 1, (7,): -1, (2,): 4, (3,): -2, (4,): 16}


def test_without_a_split_a_lost_item_fails_whole() -> None:
    found: dict[Item, int] = {}
    work: Work[Item, int] = Work(total, lambda _: 30.0, failed)
    with open_executor(Where(jobs=1)) as executor:
        list(run_work(executor, work, [(1, 7), (2,)], found.__setitem__))
    assert found == {(1, 7): -1, (2,): 4}


def test_workers_messages_reach_the_caller() -> None:
    said: list[object] = []
    with open_executor(Where(jobs=1)) as executor:
        results = list(run_work(executor, WORK, [(1,), (2,)], messages=said.extend))
        # A message travels through the queue's feeder thread, so a result can come
        # back before it: what arrives after the last tick is read until it is all there.
        deadline = time.monotonic() + 30
        while not _heard(said) and time.monotonic() < deadline:
            said.extend(executor.messages())
            time.sleep(0.01)
    assert sorted(results) == [1, 4]
    assert _heard(said)


def _heard(said: list[object]) -> bool:
    return {("part", 1), ("part", 2)} <= set(map(tuple, said))  # type: ignore[arg-type]
