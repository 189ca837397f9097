"""The dependency direction of the design, read from every module's imports (ast: nothing is imported).

models <- instances; oracle <- solver <- campaign <- cli; plots <- cli only; nothing imports
cli; the oracle imports models only; the solver imports neither instances nor campaign; the
campaign imports neither cli nor plots. Inside the oracle, one way up: a room imports only the
rooms below it (:data:`ROOMS`), and none imports the public face ``peakopt.oracle``. Imports
inside functions and under TYPE_CHECKING count. The campaign, evals and runtime reach the solver
through its public faces only (:data:`SOLVER_FACES`): one solve path.
"""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

from paths import ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]

#: The top-level packages each top-level package may import (itself included).
ALLOWED = {
    "models": {"models"},
    "instances": {"models", "instances"},
    "oracle": {"models", "oracle"},
    "solver": {"models", "oracle", "solver"},
    "campaign": {"models", "instances", "oracle", "solver", "campaign"},
    # beside the campaign, when they come
    "evals": {"models", "instances", "oracle", "solver", "campaign", "evals"},
    "runtime": {"models", "instances", "oracle", "solver", "campaign", "runtime"},
    "plots": {"models", "oracle", "plots"},
    "cli": {"models", "instances", "oracle", "solver", "campaign", "evals", "runtime", "plots", "cli"},
}

#: The oracle's rooms, bottom up, and the rooms each may import (itself included): exact times and
#: the one tolerance <- the judge <- the vectorised copies, and execution under uncertainty <-
#: reading answers <- tables and statistics.
ROOMS = {
    "base": {"base"},
    "judge": {"base", "judge"},
    "vector": {"base", "judge", "vector"},
    "uncertain": {"base", "judge", "uncertain"},
    "answers": {"base", "judge", "vector", "uncertain", "answers"},
    "tables": {"base", "judge", "vector", "uncertain", "answers", "tables"},
}


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the installed packages by dotted name (a package by its ``__init__.py``)."""
    found = {}
    for package, folder in SETUPTOOLS["package-dir"].items():
        for path in sorted((ROOT / folder).glob("*.py")):
            name = package if path.name == "__init__.py" else f"{package}.{path.stem}"
            found[name] = path
    return found


def _targets(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    """The modules an import statement names (``from P import m`` names P.m when that is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: counted from the module's package
        package = module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parts, *([base] if base else [])])
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base for a in node.names]


@functools.cache
def imports() -> dict[str, frozenset[str]]:
    """Every module's imports: all of them, first-party or not, at any depth of the code."""
    found = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text(), filename=str(path))
        found[name] = frozenset(
            target
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for target in _targets(node, name)
        )
    return found


def top(module: str) -> str | None:
    """``cli`` for ``peakopt.cli.solve``; None for a module outside peakopt."""
    parts = module.split(".")
    return parts[1] if parts[0] == "peakopt" and len(parts) > 1 else None


def edges() -> list[tuple[str, str, str, str]]:
    """(importer, imported, importer's package, imported's package) for every import within peakopt."""
    return [
        (importer, target, str(top(importer)), str(top(target)))
        for importer, targets in imports().items()
        for target in sorted(targets)
        if top(target) is not None
    ]


def crossing(rule: str, found: list[tuple[str, str, str, str]]) -> str:
    return f"{rule}:\n" + "\n".join(f"  {a} imports {b}" for a, b, _, _ in found)


def test_the_graph_is_read() -> None:
    assert len(modules()) > 100
    assert "peakopt.solver.backends" in imports()["peakopt.solver.pipeline"]
    assert "peakopt.campaign.stress" in imports()["peakopt.campaign.adversarial"]
    assert "ortools.sat.python" in imports()["peakopt.solver.search"]


def test_every_package_has_its_place_in_the_design() -> None:
    packages = {top(m) for m in modules()}
    assert packages <= set(ALLOWED), f"place {packages - set(ALLOWED)} in ALLOWED (and in design.md)"


def test_every_import_follows_the_dependency_direction() -> None:
    wrong = [e for e in edges() if e[3] not in ALLOWED[e[2]]]
    assert not wrong, crossing("against the dependency direction", wrong)


def test_nothing_imports_the_command_line() -> None:
    wrong = [e for e in edges() if e[3] == "cli" and e[2] != "cli"]
    assert not wrong, crossing("only cli imports cli", wrong)


def test_only_the_command_line_imports_plots() -> None:
    wrong = [e for e in edges() if e[3] == "plots" and e[2] not in ("plots", "cli")]
    assert not wrong, crossing("plots <- cli only", wrong)


def test_the_oracle_imports_models_only() -> None:
    wrong = [e for e in edges() if e[2] == "oracle" and e[3] not in ("oracle", "models")]
    assert not wrong, crossing("the oracle is an independent judge", wrong)


def room(module: str) -> str | None:
    """``judge`` for ``peakopt.oracle.judge.metrics`` (and the room's package); None outside a room."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["peakopt", "oracle"] and len(parts) > 2 else None


def test_every_oracle_module_is_in_a_room() -> None:
    flat = [m for m in modules() if top(m) == "oracle" and m != "peakopt.oracle" and room(m) not in ROOMS]
    assert not flat, f"place these in a room of ROOMS (and in docs/code-map.md): {flat}"
    assert {room(m) for m in modules() if room(m)} == set(ROOMS)


def against_the_rooms(found: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """The edges from a room of the oracle to a room above it, or to the public face."""
    inside = [e for e in found if room(e[0]) in ROOMS and e[3] == "oracle"]
    return [e for e in inside if room(e[1]) not in ROOMS[str(room(e[0]))]]


def test_inside_the_oracle_a_room_imports_only_the_rooms_below_it() -> None:
    assert any(room(e[0]) and room(e[1]) and room(e[0]) != room(e[1]) for e in edges()), "rooms are read"
    wrong = against_the_rooms(edges())
    assert not wrong, crossing("against the order of the oracle's rooms (or through its public face)", wrong)


def test_the_room_order_check_finds_an_upward_import() -> None:
    down = ("peakopt.oracle.tables.rows", "peakopt.oracle.judge.verdict", "oracle", "oracle")
    up = ("peakopt.oracle.judge.metrics", "peakopt.oracle.tables.rows", "oracle", "oracle")
    sideways = ("peakopt.oracle.vector.batch", "peakopt.oracle.uncertain.scenarios", "oracle", "oracle")
    face = ("peakopt.oracle.base.exact", "peakopt.oracle", "oracle", "oracle")
    models = ("peakopt.oracle.base.exact", "peakopt.models", "oracle", "models")
    assert against_the_rooms([down, up, sideways, face, models]) == [up, sideways, face]


def test_the_solver_imports_neither_instances_nor_campaign() -> None:
    wrong = [e for e in edges() if e[2] == "solver" and e[3] in ("instances", "campaign", "cli", "plots")]
    assert not wrong, crossing("the solver stands below instances and the campaign", wrong)


def test_the_campaign_imports_neither_cli_nor_plots() -> None:
    wrong = [e for e in edges() if e[2] == "campaign" and e[3] in ("cli", "plots")]
    assert not wrong, crossing("workers run the campaign's code: it must not need the command line", wrong)


#: The solver's public faces: all that the packages above it (and beside the campaign) import of it.
#: ``peakopt.solver`` loads its names lazily (OR-Tools only with ``solve``); the heuristics are a
#: face of their own, which never loads OR-Tools.
SOLVER_FACES = frozenset({"peakopt.solver", "peakopt.solver.heuristics"})
#: The packages held to them (the command line is not, yet: its modules are being moved).
THROUGH_THE_FACES = frozenset({"campaign", "evals", "runtime"})


def behind_the_faces(found: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """The edges from the campaign, evals or runtime to a solver module that is not a public face."""
    return [e for e in found if e[2] in THROUGH_THE_FACES and e[3] == "solver" and e[1] not in SOLVER_FACES]


def test_the_campaign_runtime_and_evals_use_only_the_solvers_public_faces() -> None:
    assert "peakopt.solver" in imports()["peakopt.campaign.hindsight"]
    wrong = behind_the_faces(edges())
    assert not wrong, crossing("one solve path: through peakopt.solver (or peakopt.solver.heuristics)", wrong)


def test_the_faces_check_finds_an_import_of_a_solver_module() -> None:
    face = ("peakopt.campaign.hindsight", "peakopt.solver", "campaign", "solver")
    heuristics = ("peakopt.campaign.stress", "peakopt.solver.heuristics", "campaign", "solver")
    inside = ("peakopt.campaign.hindsight", "peakopt.solver.bounds", "campaign", "solver")
    nested = ("peakopt.runtime.policies", "peakopt.solver.heuristics.online", "runtime", "solver")
    own = ("peakopt.solver.quick", "peakopt.solver.bounds", "solver", "solver")
    assert behind_the_faces([face, heuristics, inside, nested, own]) == [inside, nested]


def closure(module: str) -> set[str]:
    """Every module ``module`` imports, directly or not (packages' own imports left out)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for target in imports().get(todo.pop(), frozenset()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_milp_cross_check_uses_nothing_of_the_cp_sat_search() -> None:
    found = closure("peakopt.solver.milp")
    assert "peakopt.solver.backends" in found  # the neutral budget and result types
    cp_sat = {"peakopt.solver.search", "peakopt.solver.cpsat", "peakopt.solver.decide"} & found
    assert not cp_sat and not [m for m in found if m.startswith("ortools")], sorted(found)


def test_only_the_evals_import_inspect_ai() -> None:
    found = {m for m, targets in imports().items() if any(t.split(".")[0] == "inspect_ai" for t in targets)}
    assert found, "peakopt.evals is read"
    wrong = sorted(m for m in found if top(m) != "evals")
    assert not wrong, f"inspect_ai is imported outside peakopt.evals: {wrong}"
