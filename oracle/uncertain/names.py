"""The simulator's execution policies (``--execute``) and the literature's distributions, as plain constants.

Here, apart from :mod:`peakopt.oracle.uncertain.simulate` (the models, the dispatcher, the
policies), because the command line builds its options from them: a command's ``--help``
imports this module and no pydantic and no model.
"""

from __future__ import annotations

from typing import Literal, get_args

#: How a plan runs (see :mod:`peakopt.oracle.uncertain.simulate`).
Execution = Literal["literal", "enforced", "order", "pos"]
EXECUTIONS: tuple[Execution, ...] = get_args(Execution)

#: The stochastic RCPSP literature's five duration distributions, in its order (``--distribution``;
#: see :mod:`peakopt.oracle.uncertain.literature`).
LiteratureDistribution = Literal["U1", "U2", "Exp", "B1", "B2"]
LITERATURE_DISTRIBUTIONS: tuple[LiteratureDistribution, ...] = get_args(LiteratureDistribution)
