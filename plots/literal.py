r"""Names on pictures are drawn as they are: never read as mathtext, never hidden from a legend.

Workflow, machine, step and source names come from users' files. Matplotlib reads text between
two ``$`` as mathtext (``$x^2$`` drawn as a formula, ``$\frac{$`` failing the whole picture) and
leaves out of an automatic legend every label that starts with ``_``. Every function that builds
a figure is :func:`literal`, and every legend is given its handles and labels (:func:`legend`).

A name may hold characters matplotlib's own font (DejaVu Sans) lacks (日本語): those are drawn
from an installed CJK font if there is one, else from the Last Resort font recent matplotlib
releases bundle (a box naming the character's Unicode block), so no glyph goes missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, wraps
from typing import Any, ParamSpec, TypeVar

from matplotlib import font_manager, rc_context, rcParams
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.legend import Legend

P = ParamSpec("P")
R = TypeVar("R")

#: Fonts tried, in order, for a character the default font lacks: common CJK fonts of Linux, macOS
#: and Windows, then matplotlib's Last Resort font, which has a glyph for every character.
FALLBACK_FONTS = (
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Source Han Sans",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "IPAGothic",
    "Hiragino Sans",
    "PingFang SC",
    "Microsoft YaHei",
    "Yu Gothic",
    "Last Resort High-Efficiency",
)


@cache
def installed_fallbacks() -> tuple[str, ...]:
    """The fallback fonts that are installed (matplotlib logs a warning for each one it cannot find)."""
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return tuple(name for name in FALLBACK_FONTS if name in installed)


def font_families() -> list[str]:
    """The configured font family, then the installed fallback fonts."""
    return [*rcParams["font.family"], *installed_fallbacks()]


def literal(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` with matplotlib's mathtext off and the fallback fonts on: texts are drawn literally.

    A text keeps the settings it was created with, so the figure may be saved later.
    """

    @wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> R:
        with rc_context({"text.parse_math": False, "font.family": font_families()}):
            return draw(*args, **kwargs)

    return drawn


#: A legend's handle: an artist, or a container of them (a bar chart's bars).
Handle = Artist | tuple[Artist, ...]


def legend(ax: Axes, entries: Sequence[tuple[Handle, str]], **options: Any) -> Legend:
    """The axes' legend of exactly these (artist, label) entries, a label starting with ``_`` too."""
    handles, labels = [a for a, _ in entries], [label for _, label in entries]
    return ax.legend(handles, labels, **options)
