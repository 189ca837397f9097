"""A griffe extension: the docstrings' Sphinx roles become links of the API reference.

The docstrings cross-reference with Sphinx roles (``:class:`Interrupted```,
``:func:`~peakopt.oracle.evaluate```), which the NumPy docstring parser leaves as they are:
the site showed them literally. This turns each into an autorefs link to the object's
heading in the reference when the name resolves, in the docstring's own scope, to a public
peakopt object the reference shows; anything else (the standard library, a private helper,
an attribute without a docstring) becomes plain code. A leading ``~`` shows the last part of
the name only, as in Sphinx.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import griffe

#: ``:role:`target``` or ``:role:`title <target>``` with any role of Sphinx's Python domain.
ROLE = re.compile(
    r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const|type):`"
    r"(?:(?P<title>[^`<]+?)\s*<~?\.?(?P<target>[\w.]+)>|(?P<short>~?)\.?(?P<name>[\w.]+)(?:\(\))?)`"
)


def convert(text: str, resolve: Callable[[str], str | None]) -> str:
    """``text`` with every role a link (``[`shown`][path]``) or, when ``resolve`` gives None, code.

    Parameters
    ----------
    text
        A docstring.
    resolve
        The full path of a role's target as written, or None when it has no place in the
        reference.
    """

    def replace(found: re.Match[str]) -> str:
        name = found["target"] or found["name"]
        shown = found["title"] or (name.rsplit(".", 1)[-1] if found["short"] else name)
        path = resolve(name)
        return f"[`{shown}`][{path}]" if path else f"`{shown}`"

    return ROLE.sub(replace, text)


def objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and every object defined in it, nested ones included (not the names it imports)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            assert isinstance(member, griffe.Object)
            yield from objects(member)


def shown(target: griffe.Object) -> bool:
    """Whether the reference has a heading for ``target``: public all the way down, and documented."""
    if any(part.startswith("_") for part in target.path.split(".")):
        return False
    return target.is_module or target.has_docstring


def resolver(owner: griffe.Object, package: griffe.Module) -> Callable[[str], str | None]:
    """Resolve a role's target as Python would in ``owner``'s scope, then follow aliases."""

    def resolve(name: str) -> str | None:
        head, _, rest = name.partition(".")
        try:
            path = owner.resolve(head) if not name.startswith(f"{package.name}.") else head
        except griffe.NameResolutionError:
            return None
        path = f"{path}.{rest}" if rest else path
        if not path.startswith(f"{package.name}."):
            return None
        try:
            found = package.modules_collection[path]
            target = found.final_target if found.is_alias else found
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
        return target.path if shown(target) else None

    return resolve


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring's Sphinx roles once the whole package is loaded (aliases resolvable)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Convert the roles of the docstrings of ``pkg`` and everything defined in it."""
        for obj in objects(pkg):
            if obj.docstring is not None and ":" in obj.docstring.value:
                obj.docstring.value = convert(obj.docstring.value, resolver(obj, pkg))
