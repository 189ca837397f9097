"""A griffe extension: a pydantic model's signature is its fields, as pydantic's ``__init__`` takes them.

The models document their fields under ``Parameters`` (they are the constructor's keyword
arguments); griffe sees no ``__init__`` on a pydantic model, so it would find none of them in
the signature, and the reference would show them without their types. After griffe_pydantic
has marked models and fields, this gives each model an ``__init__`` of keyword-only parameters,
inherited fields first, as pydantic orders them.
"""

from __future__ import annotations

from typing import Any

import griffe


def classes(obj: griffe.Object) -> list[griffe.Class]:
    """Every class defined in a module or package, nested ones included."""
    found: list[griffe.Class] = []
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, griffe.Class):
            found.append(member)
        if isinstance(member, griffe.Module | griffe.Class):
            found += classes(member)
    return found


def fields(cls: griffe.Class) -> dict[str, griffe.Attribute]:
    """A model's fields by name, its bases' first (the bases griffe can resolve)."""
    found: dict[str, griffe.Attribute] = {}
    try:
        lineage = [*reversed(cls.mro()), cls]
    except ValueError:  # a base that cannot be resolved: only the class's own fields
        lineage = [cls]
    for klass in lineage:
        found.update(
            (name, member)
            for name, member in klass.members.items()
            if not member.is_alias
            and isinstance(member, griffe.Attribute)
            and "pydantic-field" in member.labels
        )
    return found


def default(field: griffe.Attribute) -> str | griffe.Expr | None:
    """A field's default as the signature shows it: ``dict()`` for ``default_factory=dict``."""
    factory = field.extra["griffe_pydantic"].get("constraints", {}).get("default_factory")
    if field.value is None and factory is not None:
        return f"{factory}()"
    return field.value


class PydanticSignatures(griffe.Extension):
    """Give every pydantic model an ``__init__`` made of its fields."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Add the signatures once the whole package is loaded (bases resolved)."""
        for cls in classes(pkg):
            if "pydantic-model" not in cls.labels or "__init__" in cls.members:
                continue
            parameters = [griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword)]
            parameters += [
                griffe.Parameter(
                    name,
                    annotation=field.annotation,
                    kind=griffe.ParameterKind.keyword_only,
                    default=default(field),
                )
                for name, field in fields(cls).items()
            ]
            init = griffe.Function("__init__", parameters=griffe.Parameters(*parameters), returns="None")
            cls.set_member("__init__", init)
