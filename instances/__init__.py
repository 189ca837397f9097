"""Readers and writers for every input format, and the bundled data.

The names below load on first use (PEP 562): a command's options need a reader's constants,
not the generator, the prompts and every format's reader (``--help`` stays fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Eager, unlike the rest: `save` is also the name of a submodule, and importing that submodule
# (from anywhere) binds the module to this package's attribute `save`, where a lazy look-up never
# runs again. Importing it here binds the function once and for all (tests/house/test_public_names.py
# checks that no lazily served name is a submodule's).
from peakopt.instances.save import WRITE_FORMATS, render, save
from peakopt.models.extras import lazy_face

if TYPE_CHECKING:
    from peakopt.instances.catalog import Catalog, default_catalog, parse_catalog
    from peakopt.instances.errors import InputError
    from peakopt.instances.generator import SuiteSpec, generate_suite
    from peakopt.instances.large import LargeSpec, large_suite
    from peakopt.instances.loader import bundled, load, parse_text, resolve
    from peakopt.instances.names import FORMATS
    from peakopt.instances.native import merge, write_atomic
    from peakopt.instances.paths import BUNDLED_PREFIX, Expanded, expand, read_text
    from peakopt.instances.peakbench import from_context, to_context
    from peakopt.instances.prompts import plan_prompt_record, plan_prompt_records, prompt_records

__all__ = [
    "BUNDLED_PREFIX",
    "FORMATS",
    "WRITE_FORMATS",
    "Catalog",
    "Expanded",
    "InputError",
    "LargeSpec",
    "SuiteSpec",
    "bundled",
    "default_catalog",
    "expand",
    "from_context",
    "generate_suite",
    "large_suite",
    "load",
    "merge",
    "parse_catalog",
    "parse_text",
    "plan_prompt_record",
    "plan_prompt_records",
    "prompt_records",
    "read_text",
    "render",
    "resolve",
    "save",
    "to_context",
    "write_atomic",
]

#: public name -> the module that defines it
_HOMES = {
    "BUNDLED_PREFIX": "peakopt.instances.paths",
    "Catalog": "peakopt.instances.catalog",
    "Expanded": "peakopt.instances.paths",
    "FORMATS": "peakopt.instances.names",
    "InputError": "peakopt.instances.errors",
    "LargeSpec": "peakopt.instances.large",
    "SuiteSpec": "peakopt.instances.generator",
    "bundled": "peakopt.instances.loader",
    "default_catalog": "peakopt.instances.catalog",
    "expand": "peakopt.instances.paths",
    "from_context": "peakopt.instances.peakbench",
    "generate_suite": "peakopt.instances.generator",
    "large_suite": "peakopt.instances.large",
    "load": "peakopt.instances.loader",
    "merge": "peakopt.instances.native",
    "parse_catalog": "peakopt.instances.catalog",
    "parse_text": "peakopt.instances.loader",
    "plan_prompt_record": "peakopt.instances.prompts",
    "plan_prompt_records": "peakopt.instances.prompts",
    "prompt_records": "peakopt.instances.prompts",
    "read_text": "peakopt.instances.paths",
    "resolve": "peakopt.instances.loader",
    "to_context": "peakopt.instances.peakbench",
    "write_atomic": "peakopt.instances.native",
}


__getattr__, __dir__ = lazy_face(globals(), _HOMES)
