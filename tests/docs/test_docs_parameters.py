"""docs/scripts/parameter_types.py: parameters documented together each show their own type."""

from __future__ import annotations

from pathlib import Path

import griffe
from docs_scripts import docs_script

SOURCE = '''
class Controller:
    """Runs steps.

    Parameters
    ----------
    workflow, machine
        The steps and the capacities.
    policy : str
        Typed in the docstring: kept as written.
    """

    def __init__(self, workflow: Workflow, machine: Machine, policy: object, name: str = "x") -> None:
        pass


def solve(workflow: Workflow, machine: Machine) -> None:
    """Solve.

    Parameters
    ----------
    workflow, machine
        The pair.
    """
'''


def documented_types(tmp_path: Path, *extensions: griffe.Extension) -> dict[str, dict[str, str]]:
    """Each object's documented parameters and the type the reference shows for them."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(SOURCE)
    loaded = griffe.load(
        "pkg",
        search_paths=[str(tmp_path)],
        docstring_parser=griffe.Parser.numpy,
        extensions=griffe.load_extensions(*extensions),
    )
    assert isinstance(loaded, griffe.Module)
    found = {}
    for name in ("Controller", "solve"):
        obj = loaded[name]
        assert obj.docstring is not None
        sections = [s for s in obj.docstring.parsed if s.kind is griffe.DocstringSectionKind.parameters]
        found[name] = {p.name: str(p.annotation) for p in sections[0].value}
    return found


def test_griffe_alone_gives_every_name_of_a_line_the_first_ones_type(tmp_path: Path) -> None:
    # what the site showed: Controller's machine as a Workflow
    assert documented_types(tmp_path)["Controller"]["machine"] == "Workflow"


def test_each_name_of_a_line_gets_the_type_of_its_own_signature(tmp_path: Path) -> None:
    extension = docs_script("parameter_types").ParameterTypes()
    found = documented_types(tmp_path, extension)
    assert found["Controller"] == {"workflow": "Workflow", "machine": "Machine", "policy": "str"}
    assert found["solve"] == {"workflow": "Workflow", "machine": "Machine"}
