"""From measured usage over time to a few segments: a change-point merge with a tolerance.

The pieces of a run (:class:`~peakopt.runtime.measurement.UsagePiece`, one per sampling interval)
are merged in two passes:

1. **Change points**: bottom-up, the two neighbouring segments whose merge strays least from
   its mean become one, while no piece of the merged segment is further from its mean usage than
   ``tolerance`` of that resource's peak over the run (10 % by default), on every resource. What
   is left are segments whose merge with a neighbour would stray further: the places where usage
   changes. Sampling noise around a steady level (within the tolerance of the level's mean) stays
   in one segment.
2. **At most** ``max_segments``: then, while there are more, the two neighbours whose means
   are closest (relative to the peaks, times the shorter one's duration) become one, so a short
   blip goes into a neighbour before two long phases are merged.

A merged segment holds the **highest** memory of its pieces (a memory budget must not be
understated) and the **time-weighted mean** of their CPU cores (CPU is a rate: the run's CPU
seconds are kept exactly; the peak cores are in the task's ``meta``).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from peakopt.runtime.measurement import UsagePiece

#: Relative change of usage that starts a new segment (a share of the resource's peak).
MERGE_TOLERANCE = 0.1
#: At most this many segments in a profile.
MAX_SEGMENTS = 8


@dataclass(frozen=True)
class ProfileSpan:
    """Merged pieces: duration, CPU seconds, memory integral (MiB × s), each resource's lowest and highest."""

    duration: float
    cpu_seconds: float
    memory_seconds: float
    cores: tuple[float, float]
    memory: tuple[float, float]

    @classmethod
    def of(cls, piece: UsagePiece) -> ProfileSpan:
        """One piece as a span."""
        return cls(
            piece.duration,
            piece.duration * piece.cores,
            piece.duration * piece.memory_mb,
            (piece.cores, piece.cores),
            (piece.memory_mb, piece.memory_mb),
        )

    def join(self, other: ProfileSpan) -> ProfileSpan:
        """The span of this one followed by ``other``."""
        return ProfileSpan(
            self.duration + other.duration,
            self.cpu_seconds + other.cpu_seconds,
            self.memory_seconds + other.memory_seconds,
            (min(self.cores[0], other.cores[0]), max(self.cores[1], other.cores[1])),
            (min(self.memory[0], other.memory[0]), max(self.memory[1], other.memory[1])),
        )

    @property
    def mean_cores(self) -> float:
        """CPU cores on average over the span."""
        return self.cpu_seconds / self.duration

    @property
    def memory_peak(self) -> float:
        """The highest memory of its pieces, MiB."""
        return self.memory[1]

    @property
    def mean_memory(self) -> float:
        """Memory on average over the span, MiB."""
        return self.memory_seconds / self.duration

    def deviation(self, scale: tuple[float, float]) -> float:
        """How far its pieces stray from its mean usage, relative to ``scale`` (the wider of both)."""
        cores, memory = self.mean_cores, self.mean_memory
        return max(
            max(self.cores[1] - cores, cores - self.cores[0]) / scale[0],
            max(self.memory[1] - memory, memory - self.memory[0]) / scale[1],
        )

    def change(self, other: ProfileSpan, scale: tuple[float, float]) -> float:
        """How far apart the two spans' mean usages are, relative to ``scale`` (the wider of both)."""
        return max(
            abs(self.mean_cores - other.mean_cores) / scale[0],
            abs(self.mean_memory - other.mean_memory) / scale[1],
        )


def merge_pieces(
    pieces: Sequence[UsagePiece], *, tolerance: float = MERGE_TOLERANCE, max_segments: int = MAX_SEGMENTS
) -> list[ProfileSpan]:
    """The pieces merged into at most ``max_segments`` spans (see the module docstring)."""
    spans = [ProfileSpan.of(p) for p in pieces if p.duration > 0]
    if not spans:
        return []
    # a resource the run does not use gets a unit scale: any use of it is then a change
    scale = (
        max(p.cores for p in pieces) or 1.0,
        max(p.memory_mb for p in pieces) or 1.0,
    )
    spans = _bottom_up(spans, lambda a, b: a.join(b).deviation(scale), lambda cost, count: cost > tolerance)
    return _bottom_up(
        spans,
        lambda a, b: a.change(b, scale) * min(a.duration, b.duration),
        lambda cost, count: count <= max(1, max_segments),
    )


def _bottom_up(
    spans: list[ProfileSpan],
    cost: Callable[[ProfileSpan, ProfileSpan], float],
    done: Callable[[float, int], bool],
) -> list[ProfileSpan]:
    """Merge the cheapest neighbours, one pair at a time, until ``done(cost, count)``.

    A heap of the neighbours' costs with lazy deletion (a stale entry names a span merged since):
    O(n log n) for a long run's thousands of samples.
    """
    count = len(spans)
    after = [*range(1, count), -1]
    before = [-1, *range(count - 1)]
    version = [0] * count
    heap = [(cost(spans[i], spans[i + 1]), i, 0, i + 1, 0) for i in range(count - 1)]
    heapq.heapify(heap)
    while heap and count > 1:
        price, i, vi, j, vj = heap[0]
        if version[i] != vi or version[j] != vj or after[i] != j:
            heapq.heappop(heap)
            continue
        if done(price, count):
            break
        heapq.heappop(heap)
        spans[i] = spans[i].join(spans[j])
        version[i] += 1
        version[j] = -1  # gone
        count -= 1
        after[i] = after[j]
        if after[i] != -1:
            before[after[i]] = i
            heapq.heappush(
                heap, (cost(spans[i], spans[after[i]]), i, version[i], after[i], version[after[i]])
            )
        if before[i] != -1:
            k = before[i]
            heapq.heappush(heap, (cost(spans[k], spans[i]), k, version[k], i, version[i]))
    kept, i = [], 0  # the first span is never merged away: merges keep the left one
    while i != -1:
        kept.append(spans[i])
        i = after[i]
    return kept


def rounded_durations(durations: Sequence[float], places: int = 3) -> list[float]:
    """Durations rounded on their cumulative boundaries: each >= 0, and they add up to the rounded total."""
    bounds, total = [0.0], 0.0
    for duration in durations:
        total += duration
        bounds.append(round(total, places))
    return [max(0.0, round(b - a, places)) for a, b in itertools.pairwise(bounds)]


def ceil_to(value: float, places: int) -> float:
    """``value`` rounded up to ``places`` decimals (a demand never understated)."""
    factor = 10.0**places
    return math.ceil(round(value * factor, 9)) / factor
