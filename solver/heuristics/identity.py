"""The identity of a method's code: what a results store compares to tell a stale row.

- A plug-in (``module:function`` or an entry point) is identified by the SHA-256 of the
  source file of the module it is named by and of the module that defines the function
  (they differ for a re-exported function); a module without a file falls back on the
  version of the distribution that installs it. An edit of another module the plug-in
  imports is not seen: ``peakopt stress --redo`` is for that.
- The built-ins are identified by the SHA-256 of every source file of
  ``peakopt.solver.heuristics``, not by peakopt's version: the version does not change
  while peakopt is edited in place (an editable install), the sources do.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import inspect
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

#: Hex digits kept of a digest (64 bits: no two versions of one method collide in practice).
DIGITS = 16


def digest(files: Iterable[Path], root: Path | None = None) -> str:
    """SHA-256 over the files' names (relative to ``root``, if given) and bytes, in the order given."""
    hasher = hashlib.sha256()
    for path in files:
        name = path.name if root is None else path.relative_to(root).as_posix()
        hasher.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hasher.hexdigest()[:DIGITS]


@functools.lru_cache(maxsize=16)
def package_code(package: str) -> str:
    """The digest of every ``.py`` file of an imported package's folder and its subfolders (sorted).

    Subpackages count (the oracle's rooms): a row judged by ``oracle/judge/metrics.py`` is stale
    when that file changes. A flat package's digest is the same as when only its own folder counted.
    """
    folder = Path(sys.modules[package].__file__ or "").parent
    files = sorted(folder.rglob("*.py"), key=lambda path: path.relative_to(folder).parts)
    return digest(files, folder)


def builtin_code() -> str:
    """The identity of every built-in heuristic: its package's sources."""
    return f"peakopt.heuristics:{package_code('peakopt.solver.heuristics')}"


def _module_code(module: ModuleType) -> str:
    path = getattr(module, "__file__", None)
    if path and Path(path).is_file():
        return digest([Path(path)])
    top = module.__name__.partition(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, []):
        return f"{dist}=={importlib.metadata.version(dist)}"
    return "unknown"


def plugin_code(module_name: str, func: Callable[..., Any]) -> str:
    """The identity of a plug-in named by ``module_name`` (already imported) whose callable is ``func``."""
    modules = {module_name: sys.modules[module_name]}
    defining = inspect.getmodule(func)
    if defining is not None:
        modules[defining.__name__] = defining
    return "plugin:" + ",".join(_module_code(modules[name]) for name in sorted(modules))
