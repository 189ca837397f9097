"""``peakopt solve -o``'s reference file (JSON Lines): streamed to ``NAME.partial``, moved over ``NAME``.

Each record is appended to the visible side file ``NAME.partial`` and flushed
as it finishes, so that an interrupted run (Ctrl-C, ``kill``, a crash) keeps
every finished record while ``NAME`` stays as it was. When the run ends, the
side file replaces ``NAME`` in one atomic step. A rerun continues from both
files: the pairs already in either are not solved again, and their records
are carried over (``--fresh`` starts over instead).

Reading a records file to resume, a torn last line (a write cut short) is
dropped; a damaged line elsewhere is skipped with a warning, and the complete
records after it are kept; a line that is JSON but not a reference record
means the file is not a reference file: it is refused, untouched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, TextIO

from pydantic import ValidationError

from peakopt.campaign.references import PairKey, ReferenceStore
from peakopt.instances.errors import OutputError
from peakopt.instances.native import file_mode, write_atomic
from peakopt.models import Machine, SolveResult, Workflow


class Destination(Protocol):
    """The output file, checked and locked by the command (``peakopt.cli.outputs.Output``)."""

    @property
    def path(self) -> str:
        """The path as given, for the messages."""

    @property
    def option(self) -> str:
        """The option that names it, for the messages."""

    @property
    def target(self) -> Path:
        """The file itself (symbolic links resolved)."""

    @property
    def special(self) -> bool:
        """A device or a FIFO (``/dev/null``): written straight, nothing to replace."""

    @property
    def partial(self) -> Path:
        """The side file the records are streamed to: ``NAME.partial``."""


def record_line(result: SolveResult) -> str:
    """One reference record as one JSON line (without its newline)."""
    return json.dumps(result.model_dump(mode="json"))


class JsonLinesReferences(ReferenceStore):
    """The records of one ``peakopt solve -o`` run, in the output's side file.

    Parameters
    ----------
    out
        The checked, locked output.
    resume
        Carry over the records already in the output and its side file; without it the run
        starts over, and a side file left by an interrupted run is dropped.
    warn
        Says, on one line, what was dropped from a file resumed from.
    remedy
        What the user can do about a file that is not a reference file (the
        command's option; a task's cache says its own).

    Raises
    ------
    OutputError
        When a file to resume from is not a reference file.
    """

    def __init__(
        self, out: Destination, resume: bool, warn: Callable[[str], None], remedy: str = "--fresh replaces it"
    ) -> None:
        self.out = out
        self.special = out.special
        self._known: dict[PairKey, SolveResult] = {}
        if self.special:  # a device (/dev/null): written straight, nothing to carry over
            self.handle: TextIO = out.target.open("w", encoding="utf-8")
            return
        partial = out.partial
        if partial.exists() and not partial.is_file():
            raise OutputError(out.option, out.path, f"{partial} is in the way and is not a file")
        kept: dict[PairKey, tuple[str, SolveResult]] = {}
        if resume:
            for source in (out.target, partial):  # the side file's records are the newer ones
                kept.update(read_done(source, warn, out.option, remedy))
        self._known = {key: record for key, (_, record) in kept.items()}
        # the side file starts with what is carried over (byte for byte), written in one step
        write_atomic(partial, "".join(line for line, _ in kept.values()))
        self.handle = partial.open("a", encoding="utf-8")

    def key(self, workflow: Workflow, machine: Machine) -> PairKey:
        """The workflow id and the machine name, as the records name them."""
        return workflow.id, machine.name

    def known(self) -> Mapping[PairKey, SolveResult]:
        """The records carried over from the files resumed from, and those added since."""
        return self._known

    def add(self, workflow: Workflow, machine: Machine, result: SolveResult) -> None:
        """Append the record to the side file and flush it, so that an interrupted run keeps it."""
        self.handle.write(record_line(result) + "\n")
        self.handle.flush()
        self._known[self.key(workflow, machine)] = result

    @property
    def kept(self) -> Path:
        """Where the records are until the run ends."""
        return self.out.target if self.special else self.out.partial

    def close(self) -> None:
        """Close the side file, leaving it in place (an interrupted or failed run)."""
        self.handle.close()

    def finish(self) -> None:
        """Move the side file over the output, in one step, flushed to disk first."""
        self.handle.flush()
        if not self.special:
            os.fsync(self.handle.fileno())
        self.handle.close()
        if not self.special:
            self.out.partial.chmod(file_mode(self.out.target))
            self.out.partial.replace(self.out.target)


def read_done(
    path: Path, warn: Callable[[str], None], option: str = "-o", remedy: str = "--fresh replaces it"
) -> dict[PairKey, tuple[str, SolveResult]]:
    """The complete records of a records file, by (workflow, machine), with their lines as they are.

    ``option`` names the file and ``remedy`` says what to do in the message of a file that is no
    reference file.

    Raises
    ------
    OutputError
        When the file is not a reference file: not UTF-8, a line that is JSON
        but not a reference record, or no complete record at all.
    """
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _not_references(path, "it is not UTF-8 text", option, remedy) from None
    lines = text.splitlines(keepends=True)
    found: dict[PairKey, tuple[str, SolveResult]] = {}
    damaged = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            damaged += 1
            if number == len(lines) and not line.endswith("\n"):
                warn(f"{path}: dropped an incomplete last record (line {number}, a write cut short)")
            else:
                warn(f"{path}: line {number} is damaged (not JSON); skipped, its solve runs again")
            continue
        try:
            record = SolveResult.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "record"
            why = f"line {number} is not a reference record ({where}: {first['msg']})"
            raise _not_references(path, why, option, remedy) from None
        found[(record.workflow, record.machine or "")] = (
            line if line.endswith("\n") else line + "\n",
            record,
        )
    if damaged and not found:
        raise _not_references(path, "no line is a complete reference record", option, remedy)
    return found


def _not_references(path: Path, why: str, option: str, remedy: str) -> OutputError:
    why = f"is not a reference file: {why}; nothing was changed ({remedy})"
    return OutputError(option, path, why)
