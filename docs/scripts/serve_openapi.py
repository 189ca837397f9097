"""Write docs/serve-openapi.json, the OpenAPI schema of ``peakopt serve``, from the app itself.

Run ``python docs/scripts/serve_openapi.py`` after changing an endpoint; ``--check`` exits 1,
writing nothing, when the committed file differs from what the app gives (tests/docs/test_docs_serve.py
runs that check), so the schema in the docs cannot drift from the code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "docs" / "serve-openapi.json"


def render() -> str:
    """The app's OpenAPI schema as indented JSON (the machine does not enter it)."""
    from peakopt.models import Machine
    from peakopt.runtime.sidecar_server import build_service

    service = build_service(Machine(name="any", capacity={"cpu": 1}), ttl=30.0)
    return json.dumps(service.app.openapi(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write the schema, or with ``--check`` say whether the committed one is up to date."""
    text = render()
    if "--check" in argv:
        same = OUTPUT.exists() and OUTPUT.read_text(encoding="utf-8") == text
        if not same:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run python docs/scripts/serve_openapi.py")
        return 0 if same else 1
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
