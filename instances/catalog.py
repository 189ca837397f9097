"""The tool catalog: MCP-style servers and tool archetypes with resource distributions.

The catalog ships as package data (``peakopt/instances/data/catalog/tools.json``,
documented in the README beside it). Each archetype gives, for one call, the
10th and 90th percentiles of a lognormal distribution of its duration,
time-averaged CPU, peak CPU and peak memory; a call drawn from it is one task
of a generated workflow (see :mod:`peakopt.instances.generator`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from peakopt.instances.documents import decode_one
from peakopt.instances.errors import InputError, from_validation
from peakopt.models.uncertainty import Z90

#: PeakBench's six functional categories of tool servers.
CATEGORIES = (
    "life_services",
    "finance_market_data",
    "research_knowledge",
    "development_tools",
    "content_design",
    "utilities",
)

#: PeakBench's resource classes of tools.
RESOURCE_CLASSES = (
    "lightweight",
    "memory_heavy",
    "cpu_heavy",
    "network_heavy",
    "disk_io_heavy",
    "process_fanout",
)

_STRICT = ConfigDict(frozen=True, extra="forbid")
_Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
_Share = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]


class _Range(BaseModel):
    """``[p10, p90]`` with ``0 < p10 <= p90``."""

    model_config = _STRICT
    low: _Positive
    high: _Positive

    @model_validator(mode="before")
    @classmethod
    def _from_pair(cls, data: object) -> object:
        if isinstance(data, list | tuple) and len(data) == 2:
            return {"low": data[0], "high": data[1]}
        return data

    @model_validator(mode="after")
    def _ordered(self) -> _Range:
        if self.low > self.high:
            raise ValueError(f"range [{self.low}, {self.high}] is not [p10, p90] with p10 <= p90")
        return self


class _StartupModel(BaseModel):
    model_config = _STRICT
    share: tuple[_Share, _Share]
    steady_memory: tuple[_Share, _Share]


class _ToolModel(BaseModel):
    model_config = _STRICT
    tool: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    resource_class: Literal[RESOURCE_CLASSES] = Field(alias="class")  # type: ignore[valid-type]
    duration_s: _Range
    cpu_avg: _Range
    cpu_peak: _Range
    memory_mb: _Range
    startup: _StartupModel | None = None
    source: str | None = None


#: Literal arguments of a tool call: name -> JSON scalar (checked by :meth:`_ServerModel._scalars`).
_Arguments = dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")], Any]


class _ServerModel(BaseModel):
    model_config = _STRICT
    server: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    arguments: _Arguments = Field(default_factory=dict)

    @field_validator("arguments")
    @classmethod
    def _scalars(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        # a union type would name its member ("str"), not the argument, in the error
        for name, value in arguments.items():
            if not isinstance(value, str | int | float | bool):
                raise ValueError(f"argument {name!r} must be a string, number or boolean, got {value!r}")
        return arguments

    tools: tuple[_ToolModel, ...] = Field(min_length=1)


class _CatalogModel(BaseModel):
    model_config = _STRICT
    about: str = ""
    units: dict[str, str] = Field(default_factory=dict)
    servers: tuple[_ServerModel, ...] = Field(min_length=1)


@dataclass(frozen=True)
class Spread:
    """A lognormal distribution given by its 10th and 90th percentiles.

    Attributes
    ----------
    mu, sigma
        Mean and standard deviation of the logarithm.
    """

    mu: float
    sigma: float

    @classmethod
    def from_percentiles(cls, p10: float, p90: float) -> Spread:
        """The lognormal whose 10th and 90th percentiles are ``p10`` and ``p90``."""
        return cls(mu=(math.log(p10) + math.log(p90)) / 2, sigma=math.log(p90 / p10) / (2 * Z90))

    def at(self, z: float) -> float:
        """The value at standard-normal score ``z``."""
        return math.exp(self.mu + self.sigma * z)


@dataclass(frozen=True)
class Startup:
    """A start-up spike: its share of the call's duration and the memory kept after it."""

    share: tuple[float, float]
    steady_memory: tuple[float, float]


@dataclass(frozen=True)
class Archetype:
    """One tool of one server and the distributions of a call's resource use."""

    server: str
    category: str
    tool: str
    resource_class: str
    duration: Spread
    cpu_avg: Spread
    cpu_peak: Spread
    memory: Spread
    startup: Startup | None
    source: str | None
    #: The literal arguments (name, value) of a call that uses no other step's output (its server's).
    arguments: tuple[tuple[str, str | int | float | bool], ...] = ()

    @property
    def name(self) -> str:
        """``server.tool``."""
        return f"{self.server}.{self.tool}"


@dataclass(frozen=True)
class Catalog:
    """Every archetype, in file order, with lookups by server and category."""

    archetypes: tuple[Archetype, ...]

    @property
    def servers(self) -> tuple[str, ...]:
        """Server names in file order."""
        return tuple(dict.fromkeys(a.server for a in self.archetypes))

    def server_category(self, server: str) -> str:
        """The category of ``server`` (KeyError if unknown)."""
        for archetype in self.archetypes:
            if archetype.server == server:
                return archetype.category
        raise KeyError(server)

    def tools(self, server: str) -> tuple[Archetype, ...]:
        """The archetypes of ``server``, in file order."""
        return tuple(a for a in self.archetypes if a.server == server)


def _archetype(server: _ServerModel, tool: _ToolModel) -> Archetype:
    def spread(r: _Range) -> Spread:
        return Spread.from_percentiles(r.low, r.high)

    startup = None if tool.startup is None else Startup(tool.startup.share, tool.startup.steady_memory)
    return Archetype(
        server=server.server,
        category=server.category,
        tool=tool.tool,
        resource_class=tool.resource_class,
        duration=spread(tool.duration_s),
        cpu_avg=spread(tool.cpu_avg),
        cpu_peak=spread(tool.cpu_peak),
        memory=spread(tool.memory_mb),
        startup=startup,
        source=tool.source,
        arguments=tuple(server.arguments.items()),
    )


def parse_catalog(text: str, source: str | Path = "<catalog>") -> Catalog:
    """Build a catalog from the JSON text of a catalog file.

    Raises
    ------
    InputError
        On invalid JSON (or nested too deeply), a broken rule (ranges, categories, classes) or a
        tool listed twice on one server.
    """
    data = decode_one(text, source)
    try:
        model = _CatalogModel.model_validate(data)
    except ValidationError as exc:
        raise from_validation(source, exc, data) from None
    archetypes = tuple(_archetype(s, t) for s in model.servers for t in s.tools)
    names = [a.name for a in archetypes]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InputError(source, f"tool {duplicates[0]!r}", "listed twice")
    return Catalog(archetypes)


@cache
def default_catalog() -> Catalog:
    """The catalog shipped with peakopt (read once)."""
    path = resources.files("peakopt.instances.data") / "catalog" / "tools.json"
    return parse_catalog(path.read_text(encoding="utf-8"), "bundled catalog")
