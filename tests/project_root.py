"""The checkout's root folder, for a test module at any depth under tests/ (no benchmark data needed)."""

from __future__ import annotations

from pathlib import Path

#: The folder holding pyproject.toml: this module lives in tests/, beside the folder tree of tests.
ROOT = Path(__file__).resolve().parents[1]
