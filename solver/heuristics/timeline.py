"""Free capacity over continuous time, as a step function the schedulers book into."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from peakopt.solver.heuristics.arrays import Block, Need


class Timeline:
    """Free capacity per resource on the pieces ``[times[i], times[i + 1])``.

    The last piece runs to infinity with the full capacity; times start at 0.
    Bookings only ever subtract, so there is no drift to correct.

    Parameters
    ----------
    capacity
        Capacity per resource index.
    eps
        Overlaps shorter than this are rounding artefacts and are ignored.
    """

    __slots__ = ("eps", "free", "times")

    def __init__(self, capacity: tuple[float, ...], eps: float) -> None:
        self.times = [0.0]
        self.free = [list(capacity)]
        self.eps = eps

    def conflict(self, start: float, blocks: tuple[Block, ...]) -> float | None:
        """None if a task with ``blocks`` fits from ``start``; else a later start worth trying.

        The returned time is the end of the first piece that lacks capacity,
        shifted by the offset of the block that hit it: no start before it
        can avoid that piece.
        """
        times, free, eps = self.times, self.free, self.eps
        last = len(times) - 1
        for offset, duration, needs in blocks:
            begin = start + offset
            end = begin + duration - eps
            i = bisect_right(times, begin) - 1
            while i < last and times[i] < end:
                if times[i + 1] > begin + eps:
                    row = free[i]
                    for k, _, threshold in needs:
                        if row[k] < threshold:
                            return times[i + 1] - offset
                i += 1
        return None

    def earliest(self, start: float, blocks: tuple[Block, ...]) -> float:
        """The earliest time at or after ``start`` from which the blocks fit."""
        later = self.conflict(start, blocks)
        while later is not None:
            start = later
            later = self.conflict(start, blocks)
        return start

    def place(self, ready: float, blocks: tuple[Block, ...]) -> float:
        """Book the blocks at the earliest start at or after ``ready`` that fits; return that start."""
        if len(blocks) > 1:
            start = self.earliest(ready, blocks)
            self.book(start, blocks)
            return start
        # one block (constant tasks): one sweep, restarting after each piece that lacks room
        times, free, eps = self.times, self.free, self.eps
        offset, duration, needs = blocks[0]
        last = len(times) - 1
        begin = ready + offset
        end = begin + duration - eps
        i = first = bisect_right(times, begin) - 1
        while i < last and times[i] < end:
            if times[i + 1] > begin + eps:
                row = free[i]
                for k, _, threshold in needs:
                    if row[k] < threshold:
                        begin = times[i + 1]
                        end = begin + duration - eps
                        first = i + 1
                        break
            i += 1
        if times[first] < begin - eps:  # begin falls inside piece `first`: cut it
            first += 1
            if first > last or times[first] > begin + eps:
                times.insert(first, begin)
                free.insert(first, free[first - 1].copy())
        self._take(first, begin + duration, needs)
        return begin - offset

    def book(self, start: float, blocks: tuple[Block, ...]) -> None:
        """Take the blocks' needs out of the free capacity from ``start``."""
        times, free, eps = self.times, self.free, self.eps
        for offset, duration, needs in blocks:
            begin = start + offset
            first = bisect_left(times, begin - eps)
            if first == len(times) or times[first] > begin + eps:  # cut the piece at begin
                times.insert(first, begin)
                free.insert(first, free[first - 1].copy())
            self._take(first, begin + duration, needs)

    def _take(self, first: int, end: float, needs: tuple[Need, ...]) -> None:
        """Cut the pieces at ``end``; take ``needs`` out of the pieces from ``first`` up to it."""
        times, free, eps = self.times, self.free, self.eps
        stop = bisect_left(times, end - eps, first)
        if stop == len(times) or times[stop] > end + eps:
            times.insert(stop, end)
            free.insert(stop, free[stop - 1].copy())
        for i in range(first, stop):
            row = free[i]
            for k, amount, _ in needs:
                row[k] -= amount

    def after(self, time: float) -> float | None:
        """The first piece boundary later than ``time``, if any."""
        i = bisect_right(self.times, time + self.eps)
        return self.times[i] if i < len(self.times) else None
