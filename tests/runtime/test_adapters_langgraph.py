"""The LangGraph adapter: a graph whose fake model emits parallel tool calls, governed and not.

Each graph is the ReAct loop (model -> tools -> model ...) over ``langchain_core``'s own fake chat
model, with tools that allocate real memory and sleep; the governed graph's messages must be the
ungoverned one's, and its governor's trace safe by the oracle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import pytest
from adapters_helpers import BOX, Peak, hold_async, hold_sync, safe_and_complete

pytest.importorskip("langgraph")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from langgraph.types import Command

from peakopt.oracle import evaluate
from peakopt.runtime.adapters.langgraph import GovernedToolNode, governed_tool, previous_turn
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError
from peakopt.runtime.profiles import ProfileStore

MB = 20  # three calls fit the 64 MiB box at once, four do not


def make_tools(peak: Peak) -> list[BaseTool]:
    def heavy(mb: int, tag: str) -> str:
        """Hold mb MiB for a while (sync)."""
        return hold_sync(mb, peak, tag)

    async def aheavy(mb: int, tag: str) -> str:
        """Hold mb MiB for a while (async)."""
        return await hold_async(mb, peak, tag)

    def broken(tag: str) -> str:
        """Always fails."""
        raise ValueError(f"broken {tag}")

    return [
        StructuredTool.from_function(heavy),
        # both bodies: a sync graph runs the function, an async one the coroutine
        StructuredTool.from_function(
            lambda mb, tag: hold_sync(mb, peak, tag), coroutine=aheavy, name="aheavy", description="Hold."
        ),
        StructuredTool.from_function(broken),
    ]


def calls(names: Sequence[str], turn: int) -> AIMessage:
    found = []
    for k, name in enumerate(names):
        args: dict[str, Any] = {"tag": f"t{turn}c{k}"}
        if name != "broken":
            args["mb"] = MB
        found.append({"name": name, "args": args, "id": f"call-{turn}-{k}", "type": "tool_call"})
    return AIMessage(content="", tool_calls=found)


def graph(tools: Any, turns: Sequence[Sequence[str]]) -> Any:
    """The ReAct loop over a fake model that emits ``turns`` of parallel tool calls, then answers."""
    model = FakeMessagesListChatModel(
        responses=[*(calls(t, i) for i, t in enumerate(turns)), AIMessage("done")]
    )
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile()


def shown(messages: Sequence[BaseMessage]) -> list[tuple[Any, ...]]:
    """What a run said, without the message ids LangGraph draws at random."""
    return [
        (m.type, m.content, getattr(m, "tool_call_id", None), getattr(m, "status", None)) for m in messages
    ]


def run(app: Any, mode: str) -> list[tuple[Any, ...]]:
    start = {"messages": [HumanMessage("go")]}
    out = app.invoke(start) if mode == "sync" else asyncio.run(app.ainvoke(start))
    return shown(out["messages"])


TURNS = [
    pytest.param([["heavy"] * 2], id="2-sync-tools"),
    pytest.param([["aheavy"] * 8], id="8-async-tools"),
    pytest.param([["heavy", "aheavy"] * 3, ["heavy"] * 5], id="6-mixed-then-5"),
    pytest.param([["heavy", "broken", "aheavy", "heavy"]], id="one-fails"),
]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("turns", TURNS)
def test_the_governed_tool_node_says_what_tool_node_says_and_stays_within_capacity(
    turns: list[list[str]], mode: str
) -> None:
    plain = run(graph(ToolNode(make_tools(Peak()), handle_tool_errors=True), turns), mode)
    governor, peak = Governor(BOX), Peak()
    node = GovernedToolNode(
        make_tools(peak),
        governor=governor,
        demands={"heavy": {"memory_mb": MB}, "aheavy": {"memory_mb": MB}, "broken": {}},
        handle_tool_errors=True,
    )
    assert run(graph(node, turns), mode) == plain
    total = sum(len(t) for t in turns)
    safe_and_complete(governor, total)
    assert peak.most <= 3
    failed = [s for s in governor.trace().steps if s.status == "failed"]
    assert len(failed) == sum(t.count("broken") for t in turns)
    assert all("broken" in (s.error or "") for s in failed)


def test_async_tool_node_starts_every_call_at_once_whatever_max_concurrency() -> None:
    # why the adapter exists: ToolNode's async path gathers every call (max_concurrency is ignored)
    peak = Peak()

    async def slow(tag: str) -> str:
        """Wait."""
        peak.enter()
        await asyncio.sleep(0.2)
        peak.leave()
        return tag

    tool = StructuredTool.from_function(coroutine=slow, name="slow", description="Wait.")
    message = AIMessage(
        content="", tool_calls=[{"name": "slow", "args": {"tag": str(k)}, "id": str(k)} for k in range(6)]
    )
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    app = builder.compile()
    asyncio.run(app.ainvoke({"messages": [message]}, {"max_concurrency": 1}))
    assert peak.most == 6


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_demands_from_the_arguments_and_from_the_profile_store(mode: str) -> None:
    store = ProfileStore()
    store.observe("aheavy", seconds=0.05, demand={"memory_mb": 40})
    governor, peak = Governor(BOX, profiles=store), Peak()
    node = GovernedToolNode(
        make_tools(peak),
        governor=governor,
        demands={"heavy": lambda args: {"memory_mb": 2 * args["mb"]}, "broken": {}},
    )
    run(graph(node, [["heavy", "aheavy", "heavy", "aheavy"]]), mode)
    safe_and_complete(governor, 4)
    assert {t.peak("memory_mb") for t in governor.trace().workflow.tasks} == {40.0}
    assert peak.most == 1  # 40 MiB each: one at a time in 64


def test_a_tool_without_any_demand_fails_at_construction_naming_it() -> None:
    with pytest.raises(GovernorError, match="'aheavy', 'broken'"):
        GovernedToolNode(make_tools(Peak()), governor=Governor(BOX), demands={"heavy": {"memory_mb": 1}})


def test_a_sync_wrapper_alone_is_refused() -> None:
    with pytest.raises(ValueError, match="awrap_tool_call"):
        GovernedToolNode(make_tools(Peak()), governor=Governor(BOX), wrap_tool_call=lambda r, e: e(r))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_your_own_wrappers_run_inside_the_lease(mode: str) -> None:
    governor = Governor(BOX)
    held: list[int] = []

    def wrap(request: Any, execute: Callable[[Any], Any]) -> Any:
        held.append(len(governor.status().running))
        return execute(request)

    async def awrap(request: Any, execute: Callable[[Any], Any]) -> Any:
        held.append(len(governor.status().running))
        return await execute(request)

    demands = {"heavy": {"memory_mb": 60}, "aheavy": {"memory_mb": 60}, "broken": {}}
    node = GovernedToolNode(
        make_tools(Peak()), governor=governor, demands=demands, wrap_tool_call=wrap, awrap_tool_call=awrap
    )
    run(graph(node, [["heavy", "aheavy", "heavy"]]), mode)
    assert held == [1, 1, 1]  # each wrapper saw its own call admitted, and only it (60 MiB each)
    safe_and_complete(governor, 3)


def test_a_call_to_a_tool_the_node_does_not_have_is_answered_by_tool_node_without_a_lease() -> None:
    governor = Governor(BOX)
    node = GovernedToolNode(
        make_tools(Peak()), governor=governor, demands={"heavy": {}, "aheavy": {}, "broken": {}}
    )
    plain = run(graph(ToolNode(make_tools(Peak())), [["missing", "heavy"]]), "async")
    assert run(graph(node, [["missing", "heavy"]]), "async") == plain
    assert "missing is not a valid tool" in str(plain[2][1])
    safe_and_complete(governor, 1)


def test_cancelling_an_async_graph_frees_every_lease_and_withdraws_the_waiting_calls() -> None:
    governor = Governor(BOX)
    node = GovernedToolNode(
        make_tools(Peak()),
        governor=governor,
        demands={"heavy": {}, "aheavy": {"memory_mb": 60}, "broken": {}},
    )
    app = graph(node, [["aheavy"] * 4])

    async def main() -> None:
        task = asyncio.create_task(app.ainvoke({"messages": [HumanMessage("go")]}))
        while governor.status().admitted == 0:
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    status = governor.status()
    assert status.running == () and status.waiting == ()
    steps = governor.trace().steps
    assert len(steps) == 4 and all(s.status != "ok" for s in steps)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_governed_tool_in_a_plain_tool_node_says_the_same_within_capacity(mode: str) -> None:
    turns = [["aheavy", "heavy"] * 3]
    plain = run(graph(ToolNode(make_tools(Peak())[:2]), turns), mode)
    governor, peak = Governor(BOX), Peak()
    tools = [governed_tool(t, governor, demand={"memory_mb": MB}) for t in make_tools(peak)[:2]]
    assert run(graph(ToolNode(tools), turns), mode) == plain
    safe_and_complete(governor, 6)
    assert peak.most <= 3


def test_a_governed_tool_keeps_its_name_schema_and_results_and_admits_direct_calls() -> None:
    governor, peak = Governor(BOX), Peak()
    inner = make_tools(peak)[0]
    tool = governed_tool(inner, governor, demand=lambda args: {"memory_mb": args["mb"]})
    assert (tool.name, tool.description) == (inner.name, inner.description)
    assert tool.tool_call_schema.model_json_schema() == inner.tool_call_schema.model_json_schema()
    assert tool.invoke({"mb": 1, "tag": "x"}) == "x:1MiB"
    assert asyncio.run(tool.ainvoke({"mb": 2, "tag": "y"})) == "y:2MiB"
    assert tool.run({"mb": 3, "tag": "z"}) == "z:3MiB"
    safe_and_complete(governor, 3)
    assert [t.demand for t in governor.trace().workflow.tasks] == [{"memory_mb": m} for m in (1, 2, 3)]
    with pytest.raises(ValueError, match="broken x"):
        governed_tool(make_tools(peak)[2], governor, demand={}).invoke({"tag": "x"})
    assert governor.trace().steps[-1].status == "failed"


def test_a_plain_function_is_made_a_tool_and_one_without_a_demand_is_refused() -> None:
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    governor = Governor(BOX)
    assert governed_tool(shout, governor, demand={}).invoke({"text": "hi"}) == "HI"
    with pytest.raises(GovernorError, match="'shout'"):
        governed_tool(shout, governor)


class NotedState(MessagesState):
    note: str


def injected_tools() -> list[BaseTool]:
    def count(word: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """Count the messages so far."""
        return f"{word}:{len(state['messages'])}:{state.get('note')}"

    def remember(note: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Remember a note (a Command that updates the state)."""
        update = {"note": note, "messages": [ToolMessage(f"noted {note}", tool_call_id=tool_call_id)]}
        return Command(update=update)

    return [StructuredTool.from_function(count), StructuredTool.from_function(remember)]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("how", ["node", "tools"])
def test_injected_state_and_commands_work_as_in_tool_node(mode: str, how: str) -> None:
    def app(node: Any) -> Any:
        builder = StateGraph(NotedState)
        builder.add_node("tools", node)
        builder.add_edge(START, "tools")
        builder.add_edge("tools", END)
        return builder.compile()

    def ran(node: Any) -> tuple[list[Any], str]:
        message = AIMessage(
            "",
            tool_calls=[
                {"name": "count", "args": {"word": "w"}, "id": "1"},
                {"name": "remember", "args": {"note": "new"}, "id": "2"},
            ],
        )
        start = {"messages": [HumanMessage("x"), message], "note": "old"}
        out = app(node).invoke(start) if mode == "sync" else asyncio.run(app(node).ainvoke(start))
        return [m.content for m in out["messages"][2:]], out["note"]

    plain = ran(ToolNode(injected_tools()))
    assert plain == (["w:2:old", "noted new"], "new")
    governor = Governor(BOX)
    node: ToolNode
    if how == "node":
        node = GovernedToolNode(injected_tools(), governor=governor, demands={"count": {}, "remember": {}})
    else:
        node = ToolNode([governed_tool(t, governor, demand={}) for t in injected_tools()])
    assert ran(node) == plain
    safe_and_complete(governor, 2)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_each_call_depends_on_the_turn_before_so_hindsight_keeps_the_turns_in_order(mode: str) -> None:
    governor = Governor(BOX)
    demands = {"heavy": {"memory_mb": MB}, "aheavy": {"memory_mb": MB}, "broken": {}}
    node = GovernedToolNode(make_tools(Peak()), governor=governor, demands=demands, handle_tool_errors=True)
    run(graph(node, [["heavy", "aheavy"], ["broken", "heavy", "heavy"], ["aheavy"]]), mode)
    safe_and_complete(governor, 6)
    tasks = governor.trace().workflow.tasks
    first, second, third = {t.id for t in tasks[:2]}, {t.id for t in tasks[2:5]}, tasks[5]
    assert all(t.depends_on == () for t in tasks[:2])
    assert all(set(t.depends_on) == first for t in tasks[2:5])
    assert set(third.depends_on) == second  # the failed call too: the model saw its message
    workflow, schedule = governor.trace().realised()
    assert evaluate(workflow, BOX, schedule).dependency_violations == 0


def test_the_turn_before_is_the_tool_messages_between_the_last_two_ai_messages() -> None:
    tool = [{"name": "t", "args": {}, "id": "x"}]
    messages = [
        HumanMessage("go"),
        AIMessage("", tool_calls=tool),
        ToolMessage("1", tool_call_id="a"),
        AIMessage("", tool_calls=tool),
        ToolMessage("2", tool_call_id="b"),
        ToolMessage("3", tool_call_id="c"),
        HumanMessage("and?"),
        AIMessage("", tool_calls=tool),
    ]
    assert previous_turn(messages) == ["b", "c"]
    assert previous_turn(messages[:2]) == []
    assert previous_turn(messages[:4]) == ["a"]
    assert previous_turn([]) == []
