"""What an adapter asks the governor for, and how the adapters load (lazily; without their extra, clearly)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from peakopt.models import Machine
from peakopt.runtime.adapters.demands import ToolDemands, parsed_arguments
from peakopt.runtime.governor import Governor
from peakopt.runtime.leases import GovernorError
from peakopt.runtime.profiles import ProfileStore

BOX = Machine(name="box", capacity={"memory_mb": 64.0})


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"mb": 3}, {"mb": 3}),
        ('{"mb": 3}', {"mb": 3}),
        ("[1, 2]", {}),
        ("not json", {}),
        ("", {}),
        (None, {}),
        (42, {}),
    ],
)
def test_arguments_are_a_mapping_whatever_the_framework_passes(arguments: Any, expected: Any) -> None:
    assert parsed_arguments(arguments) == expected


def test_keywords_of_a_fixed_a_computed_and_a_looked_up_demand() -> None:
    demands = ToolDemands(
        Governor(BOX),
        {"fixed": {"memory_mb": 8}, "grows": lambda args: {"memory_mb": 2 * args.get("mb", 1)}},
        {"fixed": 0.5},
    )
    assert demands.keywords("fixed", "{}") == {"tool": "fixed", "demand": {"memory_mb": 8}, "expected": 0.5}
    assert demands.keywords("grows", '{"mb": 5}')["demand"] == {"memory_mb": 10}
    assert demands.keywords("grows", "garbage")["demand"] == {"memory_mb": 2}
    # not declared: no demand here, the governor looks the tool up in its store when the call asks
    assert demands.keywords("other", {}) == {"tool": "other", "demand": None, "expected": None}


def test_check_names_every_tool_without_a_demand_and_accepts_the_stores() -> None:
    store = ProfileStore()
    store.observe("stored", demand={"memory_mb": 4})
    demands = ToolDemands(Governor(BOX, profiles=store), {"declared": {}})
    demands.check(["declared", "stored"])
    with pytest.raises(GovernorError, match=r"'a', 'b'.*in its profile store"):
        demands.check(["declared", "a", "stored", "b"])
    with pytest.raises(GovernorError, match="has no profile store"):
        ToolDemands(Governor(BOX)).check(["stored"])


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_adapters_package_loads_no_framework() -> None:
    done = python(
        "import sys, peakopt.runtime.adapters, peakopt.runtime.adapters.demands\n"
        "print(sorted(m for m in ('langgraph', 'langchain_core', 'agents', 'openai') if m in sys.modules))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [("langgraph", "langgraph", "langgraph"), ("agents", "agents", "agents")],
)
def test_an_adapter_without_its_extra_says_what_to_install(module: str, blocked: str, extra: str) -> None:
    done = python(f"import sys; sys.modules[{blocked!r}] = None\nimport peakopt.runtime.adapters.{module}")
    assert done.returncode == 1
    assert f"pip install 'peakopt[{extra}]'" in done.stderr.splitlines()[-1]
