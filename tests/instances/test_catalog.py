"""The bundled tool catalog: size, coverage, plausible magnitudes, cited sources."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from importlib import resources

import pytest

from peakopt.instances import InputError
from peakopt.instances.catalog import (
    CATEGORIES,
    RESOURCE_CLASSES,
    Archetype,
    Spread,
    default_catalog,
    parse_catalog,
)
from peakopt.instances.texts import call_text

CATALOG_DIR = resources.files("peakopt.instances.data") / "catalog"


def median(spread: Spread) -> float:
    return spread.at(0.0)


def find(name: str) -> Archetype:
    (archetype,) = [a for a in default_catalog().archetypes if a.name == name]
    return archetype


def test_size_and_coverage() -> None:
    catalog = default_catalog()
    assert len(catalog.archetypes) >= 120
    assert len(catalog.servers) >= 30
    assert {catalog.server_category(s) for s in catalog.servers} == set(CATEGORIES)
    classes = Counter(a.resource_class for a in catalog.archetypes)
    assert set(classes) == set(RESOURCE_CLASSES)
    assert all(len(catalog.tools(s)) >= 3 for s in catalog.servers)


def test_percentiles_round_trip() -> None:
    spread = Spread.from_percentiles(0.2, 0.8)
    assert spread.at(-1.2815515655446004) == pytest.approx(0.2)
    assert spread.at(1.2815515655446004) == pytest.approx(0.8)
    assert median(spread) == pytest.approx(0.4)


def test_magnitudes_the_issue_names() -> None:
    lookup = find("weather.forecast")  # an HTTP lookup: sub-second, ~0.1 core, ~100 MB
    assert median(lookup.duration) < 1 and median(lookup.cpu_avg) < 0.2 and 50 < median(lookup.memory) < 200
    browser = find("browser.render_page")  # a headless browser: seconds, ~1 core, ~1 GB
    assert 1 < median(browser.duration) < 10
    assert 0.5 < median(browser.cpu_avg) < 1.5
    assert 400 < median(browser.memory) < 1500
    checkpoint = find("local_llm.load_model")  # a model checkpoint load: several GB
    assert median(checkpoint.memory) > 3000


def test_classes_have_their_character() -> None:
    by_class: dict[str, list[Archetype]] = {}
    for archetype in default_catalog().archetypes:
        by_class.setdefault(archetype.resource_class, []).append(archetype)

    def typical(kind: str, figure: str) -> float:
        values = sorted(median(getattr(a, figure)) for a in by_class[kind])
        return values[len(values) // 2]

    assert typical("memory_heavy", "memory") > 3 * typical("lightweight", "memory")
    assert typical("cpu_heavy", "cpu_avg") > 3 * typical("lightweight", "cpu_avg")
    assert typical("process_fanout", "cpu_peak") > typical("cpu_heavy", "cpu_peak")
    assert typical("network_heavy", "duration") > typical("lightweight", "duration")
    for archetype in default_catalog().archetypes:
        assert median(archetype.cpu_peak) >= median(archetype.cpu_avg) * 0.99, archetype.name


def test_every_cited_source_is_documented() -> None:
    readme = (CATALOG_DIR / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", readme, flags=re.MULTILINE))
    used = {a.source for a in default_catalog().archetypes if a.source}
    assert used, "no archetype cites a measurement"
    assert used <= documented, used - documented
    assert documented <= used, documented - used


def catalog_text(tool: Mapping[str, object]) -> str:
    return json.dumps({"servers": [{"server": "s", "category": "utilities", "tools": [tool]}]})


GOOD = {
    "tool": "t",
    "class": "lightweight",
    "duration_s": [0.1, 0.5],
    "cpu_avg": [0.1, 0.2],
    "cpu_peak": [0.2, 0.4],
    "memory_mb": [50, 100],
}


def test_a_minimal_catalog_parses() -> None:
    (archetype,) = parse_catalog(catalog_text(GOOD)).archetypes
    assert archetype.name == "s.t" and archetype.category == "utilities" and archetype.startup is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"duration_s": [0.5, 0.1]}, "is not [p10, p90]"),
        ({"class": "gpu_heavy"}, "class"),
        ({"memory_mb": [0, 100]}, "greater than 0"),
        ({"startup": {"share": [0.2, 1.5], "steady_memory": [0.5, 0.8]}}, "less than 1"),
        ({"colour": "red"}, "unknown key 'colour'"),
    ],
)
def test_bad_catalogs_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        parse_catalog(catalog_text({**GOOD, **change}), "my.json")


def test_server_arguments_are_the_first_calls_literals() -> None:
    server = {
        "server": "s",
        "category": "utilities",
        "arguments": {"path": "a.csv", "rows": 10},
        "tools": [GOOD],
    }
    (archetype,) = parse_catalog(json.dumps({"servers": [server]})).archetypes
    assert archetype.arguments == (("path", "a.csv"), ("rows", 10))
    assert call_text(archetype, []) == "s.t(path='a.csv', rows=10)"
    assert all(a.arguments for a in default_catalog().archetypes)  # every bundled server has some
    for bad, message in (
        ({"Path": "x"}, "should match pattern"),
        ({"path": ["x"]}, "argument 'path' must be a string, number or boolean, got ['x']"),
    ):
        with pytest.raises(InputError, match=re.escape(message)):
            parse_catalog(json.dumps({"servers": [{**server, "arguments": bad}]}), "my.json")


def test_a_tool_listed_twice_is_refused() -> None:
    text = json.dumps({"servers": [{"server": "s", "category": "utilities", "tools": [GOOD, GOOD]}]})
    with pytest.raises(InputError, match=re.escape("tool 's.t': listed twice")):
        parse_catalog(text)


def test_invalid_json_is_refused() -> None:
    with pytest.raises(InputError, match="not valid JSON"):
        parse_catalog("{", "cat.json")
