"""What a framework's tool call asks the governor for: its demand and expected seconds, by tool name.

Both adapters take ``demands`` (tool name -> demand) and ``expected`` (tool name -> seconds).
A demand is a mapping ``{resource: amount}`` or a function of the call's arguments that returns
one (a tool whose memory grows with its input: ``lambda args: {"memory_mb": 2 * args["mb"]}``).
A tool without a declared demand is looked up by name in the governor's profile store when the
call asks (:class:`~peakopt.runtime.profiles.ProfileStore`): :meth:`ToolDemands.check` says at
construction which tools have neither, so a misconfigured node fails before the model runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError

#: A tool's demand: fixed, or computed from the arguments of each call.
ToolDemand = Mapping[str, float] | Callable[[Mapping[str, Any]], Mapping[str, float]]


def parsed_arguments(arguments: object) -> Mapping[str, Any]:
    """A call's arguments as a mapping: a dict as it is, a JSON object text parsed, else empty."""
    if isinstance(arguments, Mapping):
        return arguments
    if isinstance(arguments, str):
        try:
            found = json.loads(arguments)
        except ValueError:
            return {}
        return found if isinstance(found, dict) else {}
    return {}


class ToolDemands:
    """The keywords of :meth:`Governor.acquire` for each call of a tool (see the module docstring).

    Parameters
    ----------
    governor
        The governor the calls are admitted through.
    demands
        Tool name -> demand (a mapping, or a function of the call's arguments).
    expected
        Tool name -> expected seconds.
    """

    def __init__(
        self,
        governor: Governor,
        demands: Mapping[str, ToolDemand] | None = None,
        expected: Mapping[str, float] | None = None,
    ) -> None:
        self.governor = governor
        self.demands = dict(demands or {})
        self.expected = dict(expected or {})

    def check(self, tools: Iterable[str]) -> None:
        """Fail unless every tool named has a declared demand or one in the profile store.

        Raises
        ------
        GovernorError
            Naming the tools without a demand.
        """
        store = self.governor.profiles
        missing = [
            name
            for name in tools
            if name not in self.demands and (store is None or store.demand(name) is None)
        ]
        if missing:
            where = "in its profile store" if store is not None else "(the governor has no profile store)"
            raise GovernorError(
                f"no demand for tool {', '.join(repr(m) for m in missing)}: give demands={{name: {{...}}}} "
                f"or profile it (peakopt profile); none found {where}"
            )

    def keywords(self, tool: str, arguments: object) -> dict[str, Any]:
        """``demand``, ``tool`` and ``expected`` for one call of ``tool`` with ``arguments``."""
        declared = self.demands.get(tool)
        demand = declared(parsed_arguments(arguments)) if callable(declared) else declared
        return {"tool": tool, "demand": demand, "expected": self.expected.get(tool)}
