"""docs/scripts/sphinx_roles.py: the docstrings' Sphinx roles as reference links, or plain code."""

from __future__ import annotations

from types import ModuleType

from docs_scripts import docs_script


def roles() -> ModuleType:
    """The extension, a script rather than an installed module."""
    return docs_script("sphinx_roles")


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

    def resolve(name: str) -> None:
        asked.append(name)  # and resolves none

    roles().convert(":attr:`~.Trace.steps` :data:`SIGNALS`", resolve)
    assert asked == ["Trace.steps", "SIGNALS"]


def test_a_role_with_a_title_shows_the_title() -> None:
    text = "(:meth:`Trace.realised <peakopt.runtime.trace.Trace.realised>`)"
    assert roles().convert(text, lambda name: f"<{name}>") == (
        "([`Trace.realised`][<peakopt.runtime.trace.Trace.realised>])"
    )
