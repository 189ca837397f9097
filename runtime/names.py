"""The choices and defaults the command line offers for running workflows, as plain constants.

Here, apart from the controller, the re-planner and the trace model, because ``peakopt run`` and
``peakopt score`` build their options from them: a command's ``--help`` imports this module and
no pydantic, no model and no oracle.
"""

from __future__ import annotations

from typing import Literal

#: Where a step's command is found in the workflow: ``task.meta["command"]``.
COMMAND_KEY = "command"

#: What happens when a step fails (see :class:`~peakopt.runtime.controller.Controller`).
OnFailure = Literal["continue", "stop"]
ON_FAILURE: tuple[OnFailure, ...] = ("continue", "stop")

#: Which demands a trace is scored with: the declared ones, or what the steps were measured to use.
DemandKind = Literal["declared", "measured"]
DEMAND_KINDS: tuple[DemandKind, ...] = ("declared", "measured")

#: Default share by which a step may outrun its planned duration before the run re-plans.
THRESHOLD = 0.25
#: Default seconds a step may outrun its planned duration by on top of the threshold.
REPLAN_GRACE = 0.1
#: Default time limit of one re-plan's solve (seconds).
REPLAN_LIMIT = 0.2
