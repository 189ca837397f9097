"""Seeded random draws that stay the same across NumPy versions.

NumPy guarantees the bit stream of ``PCG64`` but not the algorithms of its
distribution methods (``normal``, ``choice``...), which may change between
releases. Every draw here is built from ``Generator.random()`` alone (53
random bits of one 64-bit word) by inverse transforms in plain Python, so a
seed gives the same suite, byte for byte, wherever it runs.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from numpy.random import Generator

T = TypeVar("T")

_NORMAL = NormalDist()
#: Normal scores are clipped here: tails beyond it give implausible tool calls.
Z_LIMIT = 2.5


class Draws:
    """A seeded source of uniform, integer, normal and choice draws.

    Parameters
    ----------
    seed
        Seed of ``numpy.random.Generator(PCG64(seed))``.
    """

    def __init__(self, seed: int) -> None:
        # here: ``peakopt validate`` reads this package and must not load NumPy
        from numpy.random import PCG64, Generator

        self._rng: Generator = Generator(PCG64(seed))

    def random(self) -> float:
        """Uniform in [0, 1)."""
        return float(self._rng.random())

    def uniform(self, low: float, high: float) -> float:
        """Uniform in [low, high)."""
        return low + (high - low) * self.random()

    def integer(self, low: int, high: int) -> int:
        """Uniform integer in [low, high], both included."""
        return low + min(high - low, int(self.random() * (high - low + 1)))

    def normal(self) -> float:
        """Standard normal score, clipped to ±:data:`Z_LIMIT`."""
        u = self.random() or 2.0**-53
        return max(-Z_LIMIT, min(Z_LIMIT, _NORMAL.inv_cdf(u)))

    def chance(self, probability: float) -> bool:
        """True with the given probability."""
        return self.random() < probability

    def choice(self, items: Sequence[T], weights: Sequence[float] | None = None) -> T:
        """One item, uniformly or with the given (non-negative) weights."""
        if weights is None:
            return items[self.integer(0, len(items) - 1)]
        cumulative = list(itertools.accumulate(weights))
        index = bisect.bisect_right(cumulative, self.random() * cumulative[-1])
        return items[min(index, len(items) - 1)]

    def sample(self, items: Sequence[T], count: int, weights: Sequence[float] | None = None) -> list[T]:
        """``count`` distinct items, drawn one by one (weighted, without replacement)."""
        pool = list(items)
        left = list(weights) if weights is not None else [1.0] * len(pool)
        picked = []
        for _ in range(count):
            index = self.choice(range(len(pool)), left)
            picked.append(pool.pop(index))
            left.pop(index)
        return picked

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A shuffled copy (Fisher-Yates)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.integer(0, i)
            out[i], out[j] = out[j], out[i]
        return out

    def partition(self, total: int, parts: int) -> list[int]:
        """``total`` split into ``parts`` positive integers (uniform over compositions)."""
        cuts = sorted(self.sample(range(1, total), parts - 1))
        bounds = [0, *cuts, total]
        return [b - a for a, b in itertools.pairwise(bounds)]
