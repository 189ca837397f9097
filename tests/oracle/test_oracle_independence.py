"""The oracle is an independent judge: importing it loads no other peakopt package but models."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_oracle_imports_models_only() -> None:
    code = (
        # every name of the lazy face loaded: its whole dependency, not just the face
        "import sys\nfrom peakopt.oracle import *\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('peakopt.')}))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "['models', 'oracle']"
