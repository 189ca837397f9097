"""The replay's choices (``--replay``, ``--delay-from``, ``--missing``), as plain constants.

Here, apart from :mod:`peakopt.oracle.answers.replay` (the models, the parser, the simulator),
because the command line builds its options from them: ``score --help`` imports this module and
no pydantic, no model and no reader.
"""

from __future__ import annotations

from typing import Literal

#: How a plan's starts are replayed: as given, or as an executor that enforces dependencies runs them.
Mode = Literal["literal", "runtime"]
#: What a ``requested_delay`` counts from: when the step's predecessors finish, or time 0.
DelayFrom = Literal["ready", "zero"]
#: What becomes of the steps an answer leaves out: the record is invalid, or they start when ready.
Missing = Literal["invalid", "asap"]
MODES: tuple[Mode, ...] = ("literal", "runtime")
DELAY_FROM: tuple[DelayFrom, ...] = ("ready", "zero")
MISSING: tuple[Missing, ...] = ("invalid", "asap")
