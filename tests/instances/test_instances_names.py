"""The choices the command line offers (:mod:`peakopt.instances.names`) are the readers' own."""

from __future__ import annotations

import subprocess
import sys

from peakopt.instances import names
from peakopt.instances.contexts import SETTING_CONTEXTS


def test_the_settings_are_the_contexts() -> None:
    assert tuple(SETTING_CONTEXTS) == names.SETTINGS


def test_the_names_import_no_pydantic() -> None:
    probe = "import sys, peakopt.instances.names; print('pydantic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
