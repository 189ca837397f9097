"""Write the picture of docs/runtime.md: the refund run under the robust policy next to the optimum.

Run ``python docs/scripts/runtime_picture.py`` after changing the page. It runs the page's own
examples in a temporary folder, in order, with the docs test's runner
(``docs/scripts/page_examples.py``; the page's generated outputs are not compared here), and
keeps the ``trace.png`` they draw as ``docs/runtime-trace.png``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import page_examples  # its neighbour: a script's own folder is the first on sys.path

PAGE = page_examples.ROOT / "docs" / "runtime.md"


def main() -> None:
    """Run the page's examples and keep their picture."""
    with tempfile.TemporaryDirectory() as folder:
        page_examples.run_page(PAGE, Path(folder), lambda page, block, text: None)
        shutil.copy(Path(folder) / "work" / "trace.png", page_examples.ROOT / "docs" / "runtime-trace.png")
    print("wrote docs/runtime-trace.png")


if __name__ == "__main__":
    main()
