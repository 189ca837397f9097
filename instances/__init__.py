"""Readers and writers for every input format, and the bundled data."""

from peakopt.instances.catalog import Catalog, default_catalog, parse_catalog
from peakopt.instances.errors import InputError
from peakopt.instances.generator import SuiteSpec, generate_suite
from peakopt.instances.large import LargeSpec, large_suite
from peakopt.instances.loader import BUNDLED_PREFIX, FORMATS, bundled, load, parse_text, resolve
from peakopt.instances.native import merge, write_atomic
from peakopt.instances.paths import Expanded, expand, read_text
from peakopt.instances.peakbench import from_context, to_context
from peakopt.instances.prompts import plan_prompt_record, plan_prompt_records, prompt_records
from peakopt.instances.save import WRITE_FORMATS, render, save

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
