"""The choices and defaults ``peakopt solve`` offers for robust references, as plain constants.

Here, apart from :mod:`peakopt.solver.robust` (the models, the oracle, NumPy), because the command
line builds its options from them: ``solve --help`` imports this module and no pydantic.
"""

from __future__ import annotations

from typing import Literal

#: What a robust reference minimises: the makespan at nominal durations, or its sample mean.
Robust = Literal["nominal", "expected"]
ROBUST: tuple[Robust, ...] = ("nominal", "expected")
#: Scenarios drawn by default (``--samples``).
SAMPLES = 100
