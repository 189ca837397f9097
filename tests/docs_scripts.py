"""The scripts under docs/scripts, loaded as modules (they are scripts, not installed packages)."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from types import ModuleType

from paths import ROOT


def docs_script(name: str) -> ModuleType:
    """``docs/scripts/<name>.py``, executed as a module of that name."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would: a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@cache
def page_examples() -> ModuleType:
    """``docs/scripts/page_examples.py`` (the examples' runner), loaded once for every docs test."""
    return docs_script("page_examples")
