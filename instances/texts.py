"""What a generated workflow says: the user's request, and each step's tool call with its arguments.

A planning prompt (:func:`peakopt.instances.prompts.plan_prompt_record`)
shows these instead of the dependencies, so they must state the
dependencies exactly, as real tool calls do: a call's argument that is
another step's output names it, ``risk.score_fraud(txn=$fetch_txn.output)``
(:data:`peakopt.models.task.REFERENCE`); a call that uses no other output
takes its server's literal arguments from the catalog,
``weather.forecast(city='Lyon')``. An argument is named after what the
producing tool returns: the last word of its name (``txn`` for
``fetch_txn``, ``forecast`` for ``forecast``), with ``_2``, ``_3``... when
two inputs of one call would share a name.

Nothing here draws from the random stream: the texts follow from what was
drawn (theme, tools, shape), so a seed gives the same workflows with or
without them.
"""

from __future__ import annotations

from collections.abc import Sequence

from peakopt.instances.catalog import Archetype

#: How the user's request opens, per theme category.
OPENINGS = {
    "life_services": "Help me organise my day",
    "finance_market_data": "Prepare a short market brief for me",
    "research_knowledge": "Research this question and report what you find",
    "development_tools": "Check the state of our software project",
    "content_design": "Produce the media I need",
    "utilities": "Process these files and data and hand over the result",
}


def argument_name(archetype: Archetype) -> str:
    """The name of the argument that carries this tool's output: the last word of the tool's name."""
    return archetype.tool.rsplit("_", 1)[-1]


def _literal(value: str | int | float | bool) -> str:
    return repr(value)  # Python's call syntax: 'Lyon', 2, True


def call_text(archetype: Archetype, inputs: Sequence[tuple[Archetype, str]]) -> str:
    """The call of ``archetype`` whose arguments are the outputs of ``inputs`` (tool, step id).

    Without inputs, the call takes its server's literal arguments.
    """
    if not inputs:
        arguments = [f"{name}={_literal(value)}" for name, value in archetype.arguments]
    else:
        seen: dict[str, int] = {}
        arguments = []
        for producer, step in inputs:
            name = argument_name(producer)
            seen[name] = seen.get(name, 0) + 1
            unique = name if seen[name] == 1 else f"{name}_{seen[name]}"
            arguments.append(f"{unique}=${step}.output")
    return f"{archetype.name}({', '.join(arguments)})"


def _listing(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def request_text(theme: str, tools: Sequence[Archetype], sources: Sequence[int]) -> str:
    """The user's request: the theme's opening, the inputs of the calls ``sources``, the servers used.

    Parameters
    ----------
    theme
        The workflow's theme category.
    tools
        The archetype of every call, by position.
    sources
        Positions of the calls that use no other call's output.
    """
    inputs = dict.fromkeys(f"{n}={_literal(v)}" for i in sources for n, v in tools[i].arguments)
    servers = list(dict.fromkeys(a.server for a in tools))
    given = f", starting from {_listing(list(inputs))}" if inputs else ""
    return (
        f"{OPENINGS.get(theme, 'Handle this request')}{given}, with the {_listing(servers)} tools; "
        "combine what they return into one answer."
    )
