"""The optional parts of the install (extras), and the one error a missing one gives.

The core install (``pip install peakopt``) is what the judge and the solver need: reading inputs,
``solve``, ``schedule``, ``score``, ``validate``. What some users never touch is an extra, imported
only where it is used: plotting (``plot``), Dask clusters (``dask``), measuring real processes
(``runtime``), the Inspect AI tasks (``eval``) and a few more. :func:`require` imports one of them
or raises :class:`MissingExtra`, whose message is the one line the command line prints.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from peakopt.models.errors import PeakoptError

#: The top-level module of each optional library -> the extra that installs it.
EXTRA_OF = {
    "matplotlib": "plot",
    "dask": "dask",
    "distributed": "dask",
    "psutil": "runtime",
    "inspect_ai": "eval",
    "openai": "eval",
    "opentelemetry": "otel",
    "fastapi": "serve",
    "uvicorn": "serve",
    "prometheus_client": "serve",
    "langgraph": "langgraph",
    "langchain_core": "langgraph",
    "agents": "agents",
    "pyjobshop": "bench",
}


def install_hint(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'peakopt[{extra}]'"


class MissingExtra(PeakoptError):
    """What was asked for needs an optional library that is not installed."""

    def __init__(self, what: str, extra: str) -> None:
        self.what, self.extra = what, extra
        super().__init__(f"{what} needs the {extra} extra: {install_hint(extra)}")


def missing_extra(error: ImportError) -> str | None:
    """The extra whose library ``error`` failed to import; None when it is no extra's.

    Only the missing module itself counts: an ImportError raised inside an installed library
    (a broken install, a bug) names another module and stays what it is.
    """
    name = error.name or ""
    return EXTRA_OF.get(name.partition(".")[0]) if isinstance(error, ModuleNotFoundError) else None


def require(module: str, what: str, extra: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtra` naming ``what`` needs it.

    Parameters
    ----------
    module
        The module to import (``"matplotlib.figure"``).
    what
        What needs it, as the message's subject (``"peakopt plot"``, ``"--html"``).
    extra
        The extra that installs it; by default the one :data:`EXTRA_OF` names for its package.

    Returns
    -------
    ModuleType
        The imported module.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        found = missing_extra(error)
        if found is None:
            raise
        raise MissingExtra(what, extra or found) from None


class LazyModule(ModuleType):
    """A module imported on its first attribute look-up, through :func:`require`.

    For a library a whole module uses but a command's ``--help`` must not import::

        if TYPE_CHECKING:
            import psutil
        else:
            psutil = LazyModule("psutil", "measuring processes")

    After the first look-up the proxy holds the module's names itself, so later look-ups cost
    what a module's do (no hook in a hot loop). A core library (NumPy) works the same way; its
    absence is then the ModuleNotFoundError it is, no extra being named.
    """

    def __init__(self, module: str, what: str, extra: str | None = None) -> None:
        super().__init__(module)
        self._need = (module, what, extra)

    def __getattr__(self, name: str) -> object:
        # only called for what the proxy itself lacks: every name of the real module
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # copy, pickle and doctest probes stay with the proxy
        real = require(*self._need)
        self.__dict__.update(real.__dict__)  # from now on a plain module look-up
        return getattr(real, name)


def lazy_face(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) for public names that load on first use.

    For a package whose face must not import what its names need (OR-Tools, NumPy)::

        __getattr__, __dir__ = lazy_face(globals(), _HOMES)

    Parameters
    ----------
    namespace
        The package's ``globals()``: a name, once loaded, is stored there, so later look-ups skip
        ``__getattr__``.
    homes
        Each public name -> the module that defines it.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> object:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
