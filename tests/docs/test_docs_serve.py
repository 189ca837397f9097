"""docs/serve.md: the OpenAPI schema is the app's, and the curl example runs against a real service."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from docs_scripts import docs_script, page_examples
from paths import ROOT
from sidecar_helpers import start_server

examples = page_examples()
blocks, commands, environment = examples.blocks, examples.commands, examples.environment
PAGE = ROOT / "docs" / "serve.md"
#: What changes from run to run in an answer: times since the service started.
VOLATILE = ("requested_at", "admitted_at", "ended_at", "waited", "expires_in", "uptime")


def test_the_committed_openapi_schema_is_the_apps() -> None:
    committed = (ROOT / "docs" / "serve-openapi.json").read_text(encoding="utf-8")
    assert docs_script("serve_openapi").render() == committed, (
        "docs/serve-openapi.json is stale: run python docs/scripts/serve_openapi.py"
    )
    schema = json.loads(committed)
    assert set(schema["paths"]) == {
        "/v1/admit", "/v1/wait", "/v1/heartbeat", "/v1/release", "/v1/status", "/v1/trace", "/metrics"
    }  # fmt: skip
    assert "HTTPValidationError" not in committed  # every 422 is the service's one-sentence error


def steady(answer: Any) -> Any:
    """An answer without its times (nested ones too)."""
    if isinstance(answer, dict):
        return {k: steady(v) for k, v in answer.items() if k not in VOLATILE}
    if isinstance(answer, list):
        return [steady(v) for v in answer]
    return answer


@pytest.mark.slow
def test_the_curl_example_runs_as_shown(tmp_path: Path) -> None:
    found = blocks(PAGE)
    for block in found:
        if block.title:
            (tmp_path / block.title).write_text(block.text, encoding="utf-8")
    curls = [c for b in found for c in commands(b.text) if c[0].startswith("curl ")]
    assert len(curls) >= 8
    server = start_server(tmp_path / "box.json", "--log", str(tmp_path / "serve.jsonl"))
    try:
        for command, shown in curls:
            line = command.replace("127.0.0.1:8731", f"127.0.0.1:{server.port}")
            done = subprocess.run(
                ["bash", "-c", line],
                cwd=tmp_path,
                env=environment(),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, (command, done.stderr)
            out = done.stdout.splitlines()
            if shown and shown[0].startswith("{"):
                assert [steady(json.loads(s)) for s in out] == [steady(json.loads(s)) for s in shown], command
            else:
                assert all(s in out for s in shown), (command, out)
    finally:
        code, err = server.stop()
    assert code == 143, err
    score = json.loads((tmp_path / "trace.json").read_text())
    assert [s["status"] for s in score["steps"]] == ["ok", "ok"]
