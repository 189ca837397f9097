"""A griffe extension: parameters documented on one line (``workflow, machine``) each show their own type.

NumPy docstrings may document several parameters together. Without a type in the docstring,
griffe takes the signature's annotation of the first name it finds and gives it to every name of
the line, so the reference showed ``Controller``'s ``machine`` as a ``Workflow``. This gives each
such parameter the annotation of its own name in the signature; a type written in the docstring
(``policy : str``) is kept as written.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: A docstring line that documents several parameters without a type: ``workflow, machine``.
TOGETHER = re.compile(r"^\s*(\w+(?:, \w+)+)\s*$", re.MULTILINE)


def untyped(parameter: griffe.DocstringParameter, signature: griffe.Parameters) -> bool:
    """Whether griffe took the parameter's type from the signature (the docstring gave none).

    Such a type is the very annotation object of a signature's parameter; one parsed from the
    docstring is a new object.
    """
    return parameter.annotation is not None and any(parameter.annotation is p.annotation for p in signature)


def retype(obj: griffe.Object) -> None:
    """Give each untyped documented parameter of ``obj`` its own signature's annotation.

    Only a docstring with such a line is parsed here (the reference parses the rest when it
    shows them), and only when the signature is known and has every name of its lines (a
    dataclass's is made later, from its fields).
    """
    signature = getattr(obj, "parameters", None)
    if obj.docstring is None or not isinstance(signature, griffe.Parameters):
        return
    together = [n for line in TOGETHER.findall(obj.docstring.value) for n in line.split(", ")]
    if not together or not all(name in signature for name in together):
        return
    for section in obj.docstring.parsed:
        if section.kind is not griffe.DocstringSectionKind.parameters:
            continue
        for parameter in section.value:
            if parameter.name in signature and untyped(parameter, signature):
                parameter.annotation = signature[parameter.name].annotation


class ParameterTypes(griffe.Extension):
    """Retype the documented parameters once the package is loaded (after the other extensions)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Retype every function's and class's documented parameters in ``pkg``."""
        for obj in _objects(pkg):
            public = not any(part.startswith("_") for part in obj.path.split(".")[1:])
            if (obj.is_function or obj.is_class) and public:
                retype(obj)


def _objects(obj: griffe.Object) -> list[griffe.Object]:
    """``obj`` and every object defined in it (not the names it imports)."""
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias:
            assert isinstance(member, griffe.Object)
            found += _objects(member)
    return found
