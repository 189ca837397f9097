"""The ranges of the numbers a run is given: seeds, seconds, counts, processes, shares.

The command line's options (:mod:`peakopt.cli.options`) and the Inspect tasks' arguments
(:mod:`peakopt.evals.arguments`) check their values with these same click types, so a value one
refuses the other refuses too, with the same rule.

The ranges, and why:

- seeds: 0 … 2**31 − 1, CP-SAT's ``random_seed`` is a signed 32-bit integer
  (NumPy and Python's ``random`` accept every such seed);
- seconds (time limits): above 0, at most :data:`SECONDS_MAX` (about eleven
  days), so that every hard deadline built from them (twice the limit plus a
  minute, summed over a chunk) still fits a ``threading.Timer``, whose
  largest timeout is ``threading.TIMEOUT_MAX`` (about 292 years on Linux,
  and ``threading.Timer(1e300)`` overflows);
- processes and threads: 1 … :data:`PROCESSES_MAX`;
- counts of items: 1 … :data:`COUNT_MAX` (0 where nothing is a valid answer).
"""

from __future__ import annotations

import math
from typing import Any

import click

#: The largest seed: CP-SAT's random_seed is an int32.
SEED_MAX = 2**31 - 1

#: The longest time limit in seconds (about 11.6 days).
SECONDS_MAX = 1e6

#: The most worker processes or solver threads one option may ask for.
PROCESSES_MAX = 1024

#: The most items (instances, workflows, evaluations, cases) one option may ask for.
COUNT_MAX = 10**6


class Finite(click.FloatRange):
    """A :class:`click.FloatRange` that also refuses ``nan`` and ``±inf``.

    A plain FloatRange lets ``nan`` through: every comparison with it is false.
    """

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, or a usage error naming the option when it is not finite or out of range."""
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


#: A seed of the solver, the methods and the generators.
SEED = click.IntRange(0, SEED_MAX)

#: A time limit in seconds.
SECONDS = Finite(0, SECONDS_MAX, min_open=True)

#: A number of worker processes or solver threads.
PROCESSES = click.IntRange(1, PROCESSES_MAX)

#: A number of items where at least one is needed.
COUNT = click.IntRange(1, COUNT_MAX)

#: A number of items where none is a valid answer.
COUNT_OR_NONE = click.IntRange(0, COUNT_MAX)

#: A probability or a share.
PROBABILITY = Finite(0, 1)
