"""Output files: checked before the work, locked while written, replaced only at the end.

The one policy of every command that writes files (``-o``, ``--worst-dir``):

1. Before any work, the output is checked: naming one of the command's own
   inputs is a usage error (exit 2); a directory where a file is wanted, a
   folder that does not exist, a read-only file or a folder that cannot be
   written is one ``Error:`` line (exit 1).
2. A lock is taken beside it for the whole run (``.NAME.lock``, an
   ``flock``): a second process writing the same output refuses at once,
   instead of interleaving its bytes with the first one's.
3. The new content is written beside the output and replaces it in one
   atomic step when the run succeeds (:func:`peakopt.instances.native.replacing`):
   an interrupted or failed run leaves the old file byte for byte.
   ``peakopt solve`` streams its records to ``NAME.partial`` instead, so that
   an interrupted run keeps them for ``--resume``.

A device or a FIFO (``-o /dev/null``) is written in place: there is nothing to
replace and nothing to lock.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import overload

import click

from peakopt.instances import locks
from peakopt.instances.errors import OutputError

#: What the help of every option that writes says about an existing file.
REPLACES = (
    "An existing file is replaced in one step when the run succeeds; an interrupted or failed run "
    "leaves it as it was."
)


class Output:
    """One checked and locked output file (or directory) of a command; see :func:`claim`."""

    def __init__(self, path: str, option: str, *, directory: bool = False) -> None:
        self.path = path
        self.option = option
        self.directory = directory
        self.target = Path(os.path.realpath(path))
        self.special = not directory and _special(self.target)
        self._lock: int | None = None

    @property
    def lock_path(self) -> Path:
        """The lock: ``.NAME.lock`` beside a file, ``.peakopt.lock`` inside a directory."""
        if self.directory:
            return self.target / ".peakopt.lock"
        return self.target.with_name(f".{self.target.name}.lock")

    @property
    def partial(self) -> Path:
        """The visible side file a streaming writer appends to: ``NAME.partial``."""
        return self.target.with_name(self.target.name + ".partial")

    def check(self) -> None:
        """An :class:`OutputError` unless the output can be written; then the lock is held."""
        if self.special:
            return
        folder = self.target if self.directory else self.target.parent
        if self.directory and self.target.exists() and not self.target.is_dir():
            raise OutputError(self.option, self.path, "exists and is not a directory")
        if not self.directory and self.target.is_dir():
            raise OutputError(self.option, self.path, "is a directory; name a file")
        parent = folder.parent if self.directory else folder
        if not parent.exists():
            raise OutputError(self.option, self.path, f"the folder {parent} does not exist")
        if not parent.is_dir():
            raise OutputError(self.option, self.path, f"{parent} is not a folder")
        if not self.directory and self.target.exists():
            if not self.target.is_file():
                raise OutputError(self.option, self.path, "is not a regular file")
            if not os.access(self.target, os.W_OK):
                raise OutputError(self.option, self.path, "is read-only")
        if self.directory:
            self._make_directory()
        self._lock = self._take_lock()

    def _make_directory(self) -> None:
        try:
            self.target.mkdir(exist_ok=True)
        except OSError as exc:
            raise OutputError(self.option, self.path, f"cannot be created ({exc.strerror})") from None

    def _take_lock(self) -> int:
        """Lock the output, or refuse at once naming the holder (:mod:`peakopt.instances.locks`)."""
        try:
            handle = locks.take(self.lock_path, wait=False)
        except OSError as exc:
            folder = self.lock_path.parent
            raise OutputError(
                self.option, self.path, f"cannot be written in {folder} ({exc.strerror})"
            ) from None
        if handle is None:
            raise OutputError(
                self.option,
                self.path,
                f"another process{locks.holder(self.lock_path)} is writing it (lock {self.lock_path}); "
                "wait for it to finish or name another output",
            )
        return handle

    def close(self) -> None:
        """Let go of the lock (its file is removed)."""
        if self._lock is not None:
            locks.release(self.lock_path, self._lock)
            self._lock = None

    def write_text(self, text: str) -> None:
        """Replace the output with ``text`` in one step (a device or FIFO is written in place)."""
        if self.special:
            with self.target.open("w", encoding="utf-8") as out:
                out.write(text)
        else:
            from peakopt.instances.native import write_atomic  # the readers' module: not for --help

            write_atomic(self.target, text)

    @contextlib.contextmanager
    def replacing(self) -> Iterator[Path]:
        """A file to write (same suffix) that replaces the output when the block succeeds."""
        if self.special:
            yield self.target
            return
        from peakopt.instances.native import replacing  # the readers' module: not for --help

        with replacing(self.target) as temp:
            yield temp


def _special(path: Path) -> bool:
    """A character device or a FIFO: written in place, never replaced."""
    return path.is_char_device() or path.is_fifo()


@overload
def claim(
    path: str, inputs: Iterable[str] = (), *, option: str = "-o", directory: bool = False
) -> Output: ...


@overload
def claim(path: None, inputs: Iterable[str] = (), *, option: str = "-o", directory: bool = False) -> None: ...


@overload
def claim(
    path: str | None, inputs: Iterable[str] = (), *, option: str = "-o", directory: bool = False
) -> Output | None: ...


def claim(
    path: str | None,
    inputs: Iterable[str] = (),
    *,
    option: str = "-o",
    directory: bool = False,
) -> Output | None:
    """Check and lock an output before the work starts; released when the command ends.

    Parameters
    ----------
    path
        The output as given (None: nothing is written).
    inputs
        Everything the command reads: an output naming one of them (or, for a
        directory output, an input inside it) is a usage error.
    option
        The option's name, for the messages.
    directory
        The output is a directory (created when missing; its folder must exist).

    Raises
    ------
    click.UsageError
        When the output is one of the inputs.
    OutputError
        When it cannot be written, or another process is writing it.
    """
    if path is None:
        return None
    output = Output(path, option, directory=directory)
    _not_an_input(output, inputs)
    output.check()
    click.get_current_context().call_on_close(output.close)
    return output


def _not_an_input(output: Output, inputs: Iterable[str]) -> None:
    for given in inputs:
        source = Path(os.path.realpath(given))
        if not source.exists() or output.special:
            continue
        same = source == output.target or (output.target.exists() and source.samefile(output.target))
        inside = output.directory and output.target in source.parents
        if same or inside:
            what = "holds the input" if inside else "is also an input"
            raise click.BadParameter(
                f"{output.path} {what} {given}; writing it would destroy that input",
                param_hint=f"'{output.option}'",
            )
