"""docs/scripts/sphinx_roles.py: the docstrings' Sphinx roles as reference links, or plain code."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from paths import ROOT

SCRIPT = ROOT / "docs" / "scripts" / "sphinx_roles.py"


def roles() -> ModuleType:
    """The extension, a script rather than an installed module."""
    spec = importlib.util.spec_from_file_location("sphinx_roles", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KNOWN = {"Trace": "peakopt.runtime.trace.Trace", "peakopt.oracle.evaluate": "peakopt.oracle.evaluate"}


def test_a_role_that_resolves_is_a_link_and_a_tilde_shows_the_last_part() -> None:
    text = (
        "See :class:`Trace` and :func:`~peakopt.oracle.evaluate`, then :py:func:`peakopt.oracle.evaluate()`."
    )
    assert roles().convert(text, KNOWN.get) == (
        "See [`Trace`][peakopt.runtime.trace.Trace] and [`evaluate`][peakopt.oracle.evaluate], "
        "then [`peakopt.oracle.evaluate`][peakopt.oracle.evaluate]."
    )


def test_a_role_that_does_not_resolve_is_plain_code_and_other_text_is_kept() -> None:
    text = "Raises :class:`KeyboardInterrupt` (see :meth:`~Trace._private`); a dict: {a: `b`}."
    assert (
        roles().convert(text, lambda name: None)
        == "Raises `KeyboardInterrupt` (see `_private`); a dict: {a: `b`}."
    )


def test_the_names_resolved_are_as_written_without_tilde_or_leading_dot() -> None:
    asked: list[str] = []
    roles().convert(":attr:`~.Trace.steps` :data:`SIGNALS`", lambda name: asked.append(name) or None)
    assert asked == ["Trace.steps", "SIGNALS"]


def test_a_role_with_a_title_shows_the_title() -> None:
    text = "(:meth:`Trace.realised <peakopt.runtime.trace.Trace.realised>`)"
    assert roles().convert(text, lambda name: f"<{name}>") == (
        "([`Trace.realised`][<peakopt.runtime.trace.Trace.realised>])"
    )
