"""Write the picture of docs/runtime.md: the refund run under the robust policy next to the optimum.

Run ``python docs/scripts/runtime_picture.py`` after changing the page. It runs the page's own
examples in a temporary folder, in order, as the docs test does (a titled block is written to
its file, python blocks run, console commands run), and keeps the ``trace.png`` they draw as
``docs/runtime-trace.png``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "runtime.md"
SNIPPET = re.compile(r'^--8<-- "([^"]+)"\n?$', re.MULTILINE)


def main() -> None:
    """Run the page's examples and keep their picture."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        for token in MarkdownIt().parse(PAGE.read_text(encoding="utf-8")):
            if token.type != "fence":
                continue
            language, _, attributes = token.info.partition(" ")
            if 'title="' in attributes:
                # a snippet include (--8<-- "docs/examples/...") is written as the file it names
                text = SNIPPET.sub(lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8"), token.content)
                (cwd / attributes.split('title="', 1)[1].split('"', 1)[0]).write_text(text)
            if language == "python":
                subprocess.run([sys.executable, "-c", token.content], cwd=cwd, env=env, check=True)
            elif language == "console":
                for line in token.content.splitlines():
                    if line.startswith("$ "):
                        subprocess.run(["bash", "-c", line[2:]], cwd=cwd, env=env, check=False)
        shutil.copy(cwd / "trace.png", ROOT / "docs" / "runtime-trace.png")
    print("wrote docs/runtime-trace.png")


if __name__ == "__main__":
    main()
