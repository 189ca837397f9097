"""The OpenAI Agents SDK: each function-tool call admitted through a governor (extra ``agents``).

The SDK starts the function-tool calls of one model turn as tasks at once (capped by count at
most: ``RunConfig(tool_execution=ToolExecutionConfig(max_function_tool_concurrency=K))``).
Wrapped here, each call waits for its lease before the tool's body runs and releases it however
it ends::

    governor = Governor(Machine(name="box", capacity={"memory_mb": 4096}))
    agent = governed_agent(agent, governor, demands={"embed": {"memory_mb": 3000}})
    result = await Runner.run(agent, "index these files")

:func:`governed_tool` wraps one ``FunctionTool`` (a copy, the original is left as it was),
:func:`governed_tools` every function tool of a tool list (hosted tools, MCP and handoffs pass
as they are), :func:`governed_agent` an agent's tools (a clone). The SDK's own handling stays
around the body: argument validation, guardrails, the failure handler that turns an exception
into a message for the model (the governor then sees the call end ``ok``), and a tool's
``timeout_seconds``, which counts the wait for the lease too (a call timed out while waiting is
withdrawn, freeing its place in the queue). A sync tool's body runs in a thread, as the SDK runs it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

try:
    from agents import Agent, FunctionTool, Tool
    from agents.tool_context import ToolContext
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "peakopt.runtime.adapters.agents needs the OpenAI Agents SDK: pip install 'peakopt[agents]'"
    ) from exc

from peakopt.runtime.adapters.demands import ToolDemand, ToolDemands
from peakopt.runtime.governor import Governor

__all__ = ["governed_agent", "governed_tool", "governed_tools"]

#: The SDK's marks on an invoker that its copies must keep (a sync tool's; see agents.tool).
_SYNC_MARK = "__agents_sync_function_tool__"


class _GovernedInvoker:
    """A function tool's ``on_invoke_tool`` that holds a lease around the SDK's own invoker."""

    def __init__(self, inner: Any, demands: ToolDemands, tool: str) -> None:
        self.inner, self.demands, self.tool = inner, demands, tool
        if getattr(inner, _SYNC_MARK, False):
            setattr(self, _SYNC_MARK, True)

    async def __call__(self, context: ToolContext[Any], arguments: str) -> Any:
        keywords = self.demands.keywords(self.tool, arguments)
        async with self.demands.governor.admit(self.tool, **keywords):
            return await self.inner(context, arguments)

    def __agents_bind_function_tool__(self, function_tool: FunctionTool) -> _GovernedInvoker:
        """Bind the SDK's invoker to a copy of the tool (the SDK copies tools, then calls this)."""
        bind = getattr(self.inner, "__agents_bind_function_tool__", None)
        inner = bind(function_tool) if callable(bind) else self.inner
        return self if inner is self.inner else _GovernedInvoker(inner, self.demands, self.tool)

    def prepare_arguments(self, arguments: str, tool_name: str) -> Any:
        """The SDK's argument preparation, unchanged."""
        prepare = getattr(self.inner, "prepare_arguments", None)
        return prepare(arguments, tool_name) if callable(prepare) else None


def governed_tool(
    tool: FunctionTool,
    governor: Governor,
    *,
    demand: ToolDemand | None = None,
    expected: float | None = None,
) -> FunctionTool:
    """A copy of ``tool`` whose every call is admitted by ``governor`` first.

    Parameters
    ----------
    tool
        A function tool (``@function_tool``, or a ``FunctionTool`` built by hand).
    governor
        The governor its calls are admitted through.
    demand, expected
        Its demand (or a function of the call's arguments) and expected seconds; without
        ``demand``, the governor's profile store's for the tool's name.

    Raises
    ------
    GovernorError
        Without ``demand`` when the profile store has none for the tool.
    TypeError
        For a tool that is not a ``FunctionTool``.
    """
    demands = ToolDemands(
        governor,
        {tool.name: demand} if demand is not None else None,
        {tool.name: expected} if expected is not None else None,
    )
    return _governed(tool, demands)


def _governed(tool: FunctionTool, demands: ToolDemands) -> FunctionTool:
    if not isinstance(tool, FunctionTool):
        raise TypeError(f"governed_tool wraps a FunctionTool, got {type(tool).__name__}")
    demands.check([tool.name])
    wrapped = copy.copy(tool)  # FunctionTool.__copy__ binds the SDK's invoker to the copy
    wrapped.on_invoke_tool = _GovernedInvoker(wrapped.on_invoke_tool, demands, tool.name)
    return wrapped


def governed_tools(
    tools: Sequence[Tool],
    governor: Governor,
    *,
    demands: Mapping[str, ToolDemand] | None = None,
    expected: Mapping[str, float] | None = None,
) -> list[Tool]:
    """``tools`` with every function tool governed (:func:`governed_tool`), the others as they are.

    Raises
    ------
    GovernorError
        Naming the function tools with neither a declared demand nor one in the profile store.
    """
    resolved = ToolDemands(governor, demands, expected)
    resolved.check([t.name for t in tools if isinstance(t, FunctionTool)])
    return [_governed(t, resolved) if isinstance(t, FunctionTool) else t for t in tools]


def governed_agent(
    agent: Agent[Any],
    governor: Governor,
    *,
    demands: Mapping[str, ToolDemand] | None = None,
    expected: Mapping[str, float] | None = None,
) -> Agent[Any]:
    """A clone of ``agent`` whose function tools are governed (:func:`governed_tools`).

    Handoffs keep their own agents: govern those with this function too.
    """
    return agent.clone(tools=governed_tools(agent.tools, governor, demands=demands, expected=expected))
