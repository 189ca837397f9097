"""From measured usage over time to a few segments: a change-point merge with a tolerance.

The pieces of a run (:class:`~peakopt.runtime.measurement.UsagePiece`, one per sampling interval)
are merged in two passes:

1. **Left to right**, a piece joins the segment before it when, on every resource, its usage
   is within ``tolerance`` of the segment's mean so far, as a share of that resource's peak over
   the run (10 % by default): a new segment starts where usage changes by more than that.
   Comparing with the mean, not the last sample, lets sampling noise around a steady level
   stay in one segment.
2. **Pairwise**, while there are more than ``max_segments``: the two neighbours whose means
   are closest (relative to the peaks, times the shorter one's duration) become one, so a short
   blip goes before a long phase.

A merged segment holds the **highest** memory of its pieces (a memory budget must not be
understated) and the **time-weighted mean** of their CPU cores (CPU is a rate: the run's CPU
seconds are kept exactly; the peak cores are in the task's ``meta``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from peakopt.runtime.measurement import UsagePiece

#: Relative change of usage that starts a new segment (a share of the resource's peak).
MERGE_TOLERANCE = 0.1
#: At most this many segments in a profile.
MAX_SEGMENTS = 8


@dataclass(frozen=True)
class ProfileSpan:
    """Merged pieces: their duration, CPU seconds, memory integral (MiB × s) and highest memory."""

    duration: float
    cpu_seconds: float
    memory_seconds: float
    memory_peak: float

    @classmethod
    def of(cls, piece: UsagePiece) -> ProfileSpan:
        """One piece as a span."""
        return cls(
            piece.duration, piece.duration * piece.cores, piece.duration * piece.memory_mb, piece.memory_mb
        )

    def join(self, other: ProfileSpan) -> ProfileSpan:
        """The span of this one followed by ``other``."""
        return ProfileSpan(
            self.duration + other.duration,
            self.cpu_seconds + other.cpu_seconds,
            self.memory_seconds + other.memory_seconds,
            max(self.memory_peak, other.memory_peak),
        )

    @property
    def mean_cores(self) -> float:
        """CPU cores on average over the span."""
        return self.cpu_seconds / self.duration

    @property
    def mean_memory(self) -> float:
        """Memory on average over the span, MiB."""
        return self.memory_seconds / self.duration

    def change(self, other: ProfileSpan, scale: tuple[float, float]) -> float:
        """How far apart the spans' mean usages are, relative to ``scale`` (the wider of both)."""
        return max(
            abs(self.mean_cores - other.mean_cores) / scale[0],
            abs(self.mean_memory - other.mean_memory) / scale[1],
        )


def merge_pieces(
    pieces: Sequence[UsagePiece], *, tolerance: float = MERGE_TOLERANCE, max_segments: int = MAX_SEGMENTS
) -> list[ProfileSpan]:
    """The pieces merged into at most ``max_segments`` spans (see the module docstring)."""
    kept = [ProfileSpan.of(p) for p in pieces if p.duration > 0]
    if not kept:
        return []
    # a resource the run does not use gets a unit scale: any use of it is then a change
    scale = (
        max(p.cores for p in pieces) or 1.0,
        max(p.memory_mb for p in pieces) or 1.0,
    )
    spans = [kept[0]]
    for span in kept[1:]:
        if spans[-1].change(span, scale) <= tolerance:
            spans[-1] = spans[-1].join(span)
        else:
            spans.append(span)
    while len(spans) > max(1, max_segments):
        costs = [a.change(b, scale) * min(a.duration, b.duration) for a, b in itertools.pairwise(spans)]
        k = min(range(len(costs)), key=costs.__getitem__)
        spans[k : k + 2] = [spans[k].join(spans[k + 1])]
    return spans


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
