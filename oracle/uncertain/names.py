"""The simulator's execution policies (``--execute``), as plain constants.

Here, apart from :mod:`peakopt.oracle.uncertain.simulate` (the models, the dispatcher, the
policies), because the command line builds its options from them: a command's ``--help``
imports this module and no pydantic and no model.
"""

from __future__ import annotations

from typing import Literal, get_args

#: How a plan runs (see :mod:`peakopt.oracle.uncertain.simulate`).
Execution = Literal["literal", "enforced", "order", "pos"]
EXECUTIONS: tuple[Execution, ...] = get_args(Execution)
