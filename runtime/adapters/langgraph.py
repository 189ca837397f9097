"""LangGraph: every tool call of a graph admitted through a governor (``pip install 'peakopt[langgraph]'``).

:class:`GovernedToolNode` is a drop-in for the prebuilt ``ToolNode``: the parallel tool calls of
one model turn run as ``ToolNode`` runs them — a thread pool in a sync graph (``invoke``),
``asyncio.gather`` in an async one (``ainvoke``, which ignores ``max_concurrency``: every call
starts at once) — but each waits for its lease first and releases it however it ends::

    governor = Governor(Machine(name="box", capacity={"memory_mb": 4096}))
    tools = GovernedToolNode([embed, search], governor=governor,
                             demands={"embed": {"memory_mb": 3000}, "search": {"memory_mb": 200}})
    graph.add_node("tools", tools)

It admits through ``ToolNode``'s own tool-call wrappers (``wrap_tool_call`` in threads,
``awrap_tool_call`` on the event loop), so the results, the error handling
(``handle_tool_errors``), injected state and ``Command`` returns are ``ToolNode``'s. A wrapper of
your own runs inside the lease (a retry keeps it). A call ``ToolNode`` answers with an error
message (``handle_tool_errors``) ends its lease ``failed`` in the trace, the message going to
the model as without the governor. Each call is declared to depend on the calls of the turn
before it (the tool messages the model saw), so the trace keeps the turns in order and its
hindsight optimum may not reorder calls across them. :func:`governed_tool` wraps one tool instead,
for a node of your own or an agent that takes tools: its ``invoke`` and ``ainvoke`` (and ``run``,
``arun``) admit first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool
    from langchain_core.tools import tool as as_tool
    from langgraph.prebuilt import ToolNode
    from langgraph.prebuilt.tool_node import ToolCallRequest
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "peakopt.runtime.adapters.langgraph needs LangGraph: pip install 'peakopt[langgraph]'"
    ) from exc

from peakopt.runtime.adapters.demands import ToolDemand, ToolDemands
from peakopt.runtime.governor import Governor

__all__ = ["GovernedTool", "GovernedToolNode", "governed_tool"]


class ToolCallError(Exception):
    """A tool call that ``ToolNode`` answered with an error message: its lease ends ``failed``."""

    def __init__(self, message: ToolMessage) -> None:
        super().__init__(str(message.content))
        self.message = message


def _failed(result: Any) -> Any:
    """``result``, unless it is ``ToolNode``'s error message for a tool that raised (then raised)."""
    if isinstance(result, ToolMessage) and result.status == "error":
        raise ToolCallError(result)
    return result


#: How many tool call ids a node remembers the leases of (to find a turn's predecessors).
REMEMBERED = 10_000


def previous_turn(messages: Sequence[Any]) -> list[str]:
    """The ids of the tool calls whose results the model saw before this turn's calls.

    They are the tool messages between the last AI message (this turn's calls) and the one before.
    """
    found: list[str] = []
    current = False
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            if current:
                break
            current = True
        elif current and isinstance(message, ToolMessage):
            found.append(message.tool_call_id)
    return found[::-1]


class _Turns:
    """Tool call id -> lease id of a node's latest calls: each call depends on the turn before it."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._leases: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()  # a sync graph's calls run in threads

    def before(self, state: Any) -> tuple[str, ...]:
        """The leases of the calls of the turn before, as far as this node ran them."""
        messages = state if isinstance(state, list) else None
        if isinstance(state, dict):
            messages = state.get(self.key)
        elif messages is None:
            messages = getattr(state, self.key, None)
        ids = previous_turn(messages) if isinstance(messages, list) else []
        with self._lock:
            return tuple(self._leases[i] for i in ids if i in self._leases)

    def remember(self, call_id: str | None, lease_id: str) -> None:
        if call_id is None:
            return
        with self._lock:
            self._leases[call_id] = lease_id
            self._leases.move_to_end(call_id)
            while len(self._leases) > REMEMBERED:
                self._leases.popitem(last=False)


Wrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Any]], Any]
AsyncWrapper = Callable[[ToolCallRequest, Callable[[ToolCallRequest], Awaitable[Any]]], Awaitable[Any]]


class GovernedToolNode(ToolNode):
    """``ToolNode`` whose every tool call is admitted by ``governor`` first (see the module docstring).

    Parameters
    ----------
    tools
        As ``ToolNode``'s: tools, or functions made tools.
    governor
        The governor the calls are admitted through (one per machine, shared by every node).
    demands, expected
        Tool name -> demand (or a function of the call's arguments) and expected seconds
        (:mod:`peakopt.runtime.adapters.demands`); a tool not in ``demands`` is looked up in the
        governor's profile store.
    wrap_tool_call, awrap_tool_call
        Your own wrappers, as ``ToolNode``'s; they run inside the lease. Give both or neither:
        a sync wrapper alone would make ``ToolNode`` run it on the event loop of an async graph,
        where waiting for a lease would block every other call.
    **options
        ``ToolNode``'s other keywords (``name``, ``tags``, ``handle_tool_errors``, ``messages_key``).

    Raises
    ------
    GovernorError
        When a tool has no declared demand and none in the profile store.
    ValueError
        For ``wrap_tool_call`` without ``awrap_tool_call``.
    """

    def __init__(
        self,
        tools: Sequence[BaseTool | Callable[..., Any]],
        *,
        governor: Governor,
        demands: Mapping[str, ToolDemand] | None = None,
        expected: Mapping[str, float] | None = None,
        wrap_tool_call: Wrapper | None = None,
        awrap_tool_call: AsyncWrapper | None = None,
        **options: Any,
    ) -> None:
        if wrap_tool_call is not None and awrap_tool_call is None:
            raise ValueError(
                "GovernedToolNode: give awrap_tool_call beside wrap_tool_call (an async graph would "
                "run the sync wrapper on its event loop, where waiting for a lease blocks every call)"
            )
        self.governor = governor
        self._demands = ToolDemands(governor, demands, expected)
        self._inner, self._ainner = wrap_tool_call, awrap_tool_call
        super().__init__(tools, wrap_tool_call=self._admit, awrap_tool_call=self._aadmit, **options)
        self._demands.check(self.tools_by_name)
        self._turns = _Turns(self._messages_key)

    def _keywords(self, request: ToolCallRequest) -> dict[str, Any]:
        call = request.tool_call
        keywords = self._demands.keywords(call["name"], call["args"])
        return {**keywords, "depends_on": self._turns.before(request.state)}

    def _admit(self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Any]) -> Any:
        """In a thread of the sync graph: block until admitted, run, release."""
        if request.tool is None:  # not a tool of this node: ToolNode answers with an error message
            return execute(request)
        call = request.tool_call
        try:
            with self.governor.admit_sync(call["name"], **self._keywords(request)) as lease:
                self._turns.remember(call["id"], lease.id)
                return _failed(execute(request) if self._inner is None else self._inner(request, execute))
        except ToolCallError as error:  # released as failed; the graph gets ToolNode's message
            return error.message

    async def _aadmit(
        self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """On the event loop of the async graph: wait until admitted, run, release."""
        if request.tool is None:
            return await execute(request)
        call = request.tool_call
        try:
            async with self.governor.admit(call["name"], **self._keywords(request)) as lease:
                self._turns.remember(call["id"], lease.id)
                return _failed(
                    await (execute(request) if self._ainner is None else self._ainner(request, execute))
                )
        except ToolCallError as error:
            return error.message


class GovernedTool(BaseTool):
    """A LangChain tool whose every call is admitted by a governor first (:func:`governed_tool`)."""

    inner: BaseTool
    governor: Any
    demands: Any

    @property
    def func(self) -> Callable[..., Any] | None:
        """The wrapped tool's function, where ``ToolNode`` looks for injected arguments."""
        return getattr(self.inner, "func", None)

    @property
    def coroutine(self) -> Callable[..., Awaitable[Any]] | None:
        """The wrapped tool's coroutine function, if any."""
        return getattr(self.inner, "coroutine", None)

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        """The wrapped tool's input schema."""
        return self.inner.get_input_schema(config)

    def _keywords(self, tool_input: object) -> dict[str, Any]:
        args = tool_input.get("args", tool_input) if isinstance(tool_input, dict) else tool_input
        keywords: dict[str, Any] = self.demands.keywords(self.name, args)
        return keywords

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002 (Runnable.invoke's own name)
        """The wrapped tool's ``invoke``, once admitted."""
        with self.governor.admit_sync(self.name, **self._keywords(input)):
            return self.inner.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        """The wrapped tool's ``ainvoke``, once admitted."""
        async with self.governor.admit(self.name, **self._keywords(input)):
            return await self.inner.ainvoke(input, config, **kwargs)

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped tool's ``run``, once admitted."""
        with self.governor.admit_sync(self.name, **self._keywords(tool_input)):
            return self.inner.run(tool_input, *args, **kwargs)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped tool's ``arun``, once admitted."""
        async with self.governor.admit(self.name, **self._keywords(tool_input)):
            return await self.inner.arun(tool_input, *args, **kwargs)

    def _run(self, *args: Any, callbacks: Callbacks = None, **kwargs: Any) -> Any:
        raise NotImplementedError("GovernedTool runs through its wrapped tool's run")  # never reached


def governed_tool(
    tool: BaseTool | Callable[..., Any],
    governor: Governor,
    *,
    demand: ToolDemand | None = None,
    expected: float | None = None,
) -> GovernedTool:
    """``tool`` (a LangChain tool, or a function made one) admitted by ``governor`` at each call.

    The wrapped tool keeps its name, description and argument schema, so a model binds it as
    before; a call's result or exception is the tool's.

    Parameters
    ----------
    tool
        The tool.
    governor
        The governor its calls are admitted through.
    demand, expected
        Its demand (or a function of the call's arguments) and expected seconds; without
        ``demand``, the governor's profile store's for the tool's name.

    Raises
    ------
    GovernorError
        Without ``demand`` when the profile store has none for the tool.
    """
    inner = tool if isinstance(tool, BaseTool) else as_tool(tool)
    demands = ToolDemands(
        governor,
        {inner.name: demand} if demand is not None else None,
        {inner.name: expected} if expected is not None else None,
    )
    demands.check([inner.name])
    return GovernedTool(
        name=inner.name,
        description=inner.description,
        args_schema=inner.args_schema,
        return_direct=inner.return_direct,
        response_format=inner.response_format,
        inner=inner,
        governor=governor,
        demands=demands,
    )
