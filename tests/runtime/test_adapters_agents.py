"""The OpenAI Agents SDK adapter: an agent whose scripted model emits parallel tool calls, governed and not.

The model is the SDK's own test double (``agents.testing.ScriptedModel``), so nothing leaves the
machine; the tools allocate real memory and sleep. The governed agent's output and tool outputs
must be the ungoverned one's, and its governor's trace safe by the oracle.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from adapters_helpers import BOX, Peak, hold_async, hold_sync, safe_and_complete

pytest.importorskip("agents")

from agents import Agent, FunctionTool, RunConfig, Runner, WebSearchTool, function_tool, set_tracing_disabled
from agents.run_config import ToolExecutionConfig
from agents.testing import ScriptedModel, assistant_message, function_call

from peakopt.runtime.adapters.agents import governed_agent, governed_tool, governed_tools
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError
from peakopt.runtime.profiles import ProfileStore

set_tracing_disabled(True)  # the SDK would export its traces to OpenAI
MB = 20
DEMANDS = {"heavy": {"memory_mb": MB}, "aheavy": {"memory_mb": MB}, "broken": {}}


def make_tools(peak: Peak) -> list[FunctionTool]:
    @function_tool
    def heavy(mb: int, tag: str) -> str:
        """Hold mb MiB for a while (sync: the SDK runs it in a thread)."""
        return hold_sync(mb, peak, tag)

    @function_tool
    async def aheavy(mb: int, tag: str) -> str:
        """Hold mb MiB for a while."""
        return await hold_async(mb, peak, tag)

    @function_tool
    def broken(tag: str) -> str:
        """Always fails (the SDK tells the model)."""
        raise ValueError(f"broken {tag}")

    return [heavy, aheavy, broken]


def script(turns: Sequence[Sequence[str]]) -> ScriptedModel:
    steps: list[Any] = []
    for turn, names in enumerate(turns):
        step = []
        for k, name in enumerate(names):
            args: dict[str, Any] = {"tag": f"t{turn}c{k}"}
            if name != "broken":
                args["mb"] = MB
            step.append(function_call(name, args, call_id=f"call-{turn}-{k}"))
        steps.append(step)
    steps.append([assistant_message("done")])
    return ScriptedModel(steps)


def run(agent: Agent[Any], cap: int | None = None) -> tuple[Any, list[tuple[str, Any]]]:
    config = RunConfig(tool_execution=ToolExecutionConfig(max_function_tool_concurrency=cap))
    result = asyncio.run(Runner.run(agent, "go", run_config=config))
    said: list[tuple[str, Any]] = [(item.type, getattr(item, "output", None)) for item in result.new_items]
    return result.final_output, said


TURNS = [
    pytest.param([["aheavy"] * 8], id="8-async"),
    pytest.param([["heavy"] * 5], id="5-sync"),
    pytest.param([["heavy", "aheavy"] * 3, ["aheavy"] * 4], id="6-mixed-then-4"),
    pytest.param([["heavy", "broken", "aheavy"]], id="one-fails"),
]


@pytest.mark.parametrize("cap", [None, 2])
@pytest.mark.parametrize("turns", TURNS)
def test_the_governed_agent_says_what_the_agent_says_and_stays_within_capacity(
    turns: list[list[str]], cap: int | None
) -> None:
    plain = run(Agent(name="a", tools=[*make_tools(Peak())], model=script(turns)), cap)
    governor, peak = Governor(BOX), Peak()
    agent = Agent(name="a", tools=[*make_tools(peak)], model=script(turns))
    assert run(governed_agent(agent, governor, demands=DEMANDS), cap) == plain
    assert plain[0] == "done"
    safe_and_complete(governor, sum(len(t) for t in turns))
    assert peak.most <= 3


def test_the_original_tools_and_agent_are_left_as_they_were() -> None:
    governor, peak = Governor(BOX), Peak()
    tools = make_tools(peak)
    agent = Agent(name="a", tools=list(tools), model=script([["aheavy"] * 2]))
    governed = governed_agent(agent, governor, demands=DEMANDS)
    assert governed.tools is not agent.tools and agent.tools == tools
    assert [t.name for t in governed.tools] == [t.name for t in tools]
    assert all(
        g.params_json_schema == t.params_json_schema for g, t in zip(governed.tools, tools, strict=True)
    )
    run(agent)  # the original runs ungoverned
    assert governor.status().admitted == 0


def test_demands_from_the_arguments_and_from_the_profile_store() -> None:
    store = ProfileStore()
    store.observe("aheavy", seconds=0.05, demand={"memory_mb": 40})
    governor, peak = Governor(BOX, profiles=store), Peak()
    tools = governed_tools(
        make_tools(peak),
        governor,
        demands={"heavy": lambda args: {"memory_mb": 2 * args["mb"]}, "broken": {}},
    )
    run(Agent(name="a", tools=tools, model=script([["heavy", "aheavy", "heavy", "aheavy"]])))
    safe_and_complete(governor, 4)
    assert {t.peak("memory_mb") for t in governor.trace().workflow.tasks} == {40.0}
    assert peak.most == 1


def test_a_function_tool_without_any_demand_is_refused_naming_it_and_other_tools_pass() -> None:
    governor = Governor(BOX)
    with pytest.raises(GovernorError, match="'aheavy', 'broken'"):
        governed_tools(make_tools(Peak()), governor, demands={"heavy": {}})
    hosted = WebSearchTool()
    tools = governed_tools([hosted, *make_tools(Peak())], governor, demands=DEMANDS)
    assert tools[0] is hosted
    with pytest.raises(TypeError, match="WebSearchTool"):
        governed_tool(hosted, governor, demand={})  # type: ignore[arg-type]


def test_a_copy_of_a_governed_tool_is_governed_too() -> None:
    governor, peak = Governor(BOX), Peak()
    tool = governed_tool(make_tools(peak)[1], governor, demand={"memory_mb": 60})
    copied = dataclasses.replace(tool, name="aheavy")  # the SDK copies tools (replace runs __post_init__)
    agent = Agent(name="a", tools=[copied], model=script([["aheavy"] * 3]))
    run(agent)
    safe_and_complete(governor, 3)
    assert peak.most == 1


def test_a_call_that_times_out_while_waiting_is_withdrawn_and_frees_its_place() -> None:
    governor, peak = Governor(BOX), Peak()

    @function_tool(timeout=0.5)
    async def slow(tag: str) -> str:
        """Hold the whole box for a while."""
        peak.enter()
        await asyncio.sleep(0.3)
        peak.leave()
        return tag

    agent = Agent(
        name="a",
        tools=[governed_tool(slow, governor, demand={"memory_mb": 64})],
        model=script([["slow"] * 3]),
    )
    output, said = run(agent)
    assert output == "done"
    outputs = [o for kind, o in said if kind == "tool_call_output_item"]
    assert outputs[0] == "t0c0" and any("timed out" in str(o) for o in outputs)
    status = governor.status()
    assert status.running == () and status.waiting == ()
    assert peak.most == 1
    steps = governor.trace().steps
    assert [s.status for s in steps[:2]] == ["ok", "failed"]  # the second timed out while running
    # the third timed out while waiting: withdrawn, or (admitted in that instant) released at once
    assert steps[2].status == "skipped" or steps[2].error == "cancelled while waiting"
