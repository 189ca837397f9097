"""Readers and writers for every input format, and the bundled data."""

from peakopt.instances.errors import InputError
from peakopt.instances.loader import BUNDLED_PREFIX, FORMATS, bundled, load, resolve
from peakopt.instances.native import merge, write_atomic
from peakopt.instances.peakbench import from_context, to_context
from peakopt.instances.save import WRITE_FORMATS, render, save

__all__ = [
    "BUNDLED_PREFIX",
    "FORMATS",
    "WRITE_FORMATS",
    "InputError",
    "bundled",
    "from_context",
    "load",
    "merge",
    "render",
    "resolve",
    "save",
    "to_context",
    "write_atomic",
]
