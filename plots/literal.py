r"""Names on pictures are drawn as they are: never read as mathtext, never hidden from a legend.

Workflow, machine, step and source names come from users' files. Matplotlib reads text between
two ``$`` as mathtext (``$x^2$`` drawn as a formula, ``$\frac{$`` failing the whole picture) and
leaves out of an automatic legend every label that starts with ``_``. Every function that builds
a figure is :func:`literal`, and every legend is given its handles and labels (:func:`legend`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.legend import Legend

P = ParamSpec("P")
R = TypeVar("R")


def literal(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` with matplotlib's mathtext off: the texts it creates are drawn literally.

    A text keeps the setting it was created with, so the figure may be saved later.
    """

    @wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> R:
        with rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return drawn


#: A legend's handle: an artist, or a container of them (a bar chart's bars).
Handle = Artist | tuple[Artist, ...]


def legend(ax: Axes, entries: Sequence[tuple[Handle, str]], **options: Any) -> Legend:
    """The axes' legend of exactly these (artist, label) entries, a label starting with ``_`` too."""
    handles, labels = [a for a, _ in entries], [label for _, label in entries]
    return ax.legend(handles, labels, **options)
