"""What every model of peakopt shares: frozen strict config, the non-negative number, cached copies."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field

#: A finite, non-negative number (a duration in seconds or a demand). Strict: a
#: JSON number (int or float), never ``true`` or ``"1.5"``, which lax pydantic
#: would quietly read as 1.0 and 1.5 (a context's quoted numbers are converted
#: by its reader, where the field can be named).
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]

#: Resource name -> amount, e.g. ``{"cpu": 1.5, "memory_mb": 2048}``.
Demand = dict[Annotated[str, Field(min_length=1)], NonNegative]

FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Cached(BaseModel):
    """A model whose ``cached_property`` values are never carried into a changed copy.

    pydantic's :meth:`model_copy` copies the instance's ``__dict__``, where
    :class:`functools.cached_property` keeps its values: a copy with other
    fields would otherwise answer with the original's segments or index.
    """

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (see :meth:`pydantic.BaseModel.model_copy`); cached values are recomputed if ``update``."""
        copy = super().model_copy(update=update, deep=deep)
        if update:
            for name in _cached_names(type(self)):
                copy.__dict__.pop(name, None)
        return copy


@cache  # a class's cached properties never change; scanning its MRO per copy was 15 % of hindsight
def _cached_names(kind: type) -> tuple[str, ...]:
    return tuple(n for c in kind.__mro__ for n, v in vars(c).items() if isinstance(v, cached_property))
