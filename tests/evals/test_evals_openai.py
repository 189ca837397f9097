"""peakopt/schedule through Inspect's OpenAI provider, against a local OpenAI-compatible server.

The server (pytest-httpserver, on 127.0.0.1 only) answers each chat completion
with a canned answer for the prompt's workflow, so the real HTTP client path
runs: request, response format, reasoning parsed out of the reply. Nothing
leaves the machine: the provider's base URL is the local server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evals_helpers import ANSWERS, log_values, same, scored_rows, workflow_of, write_suite
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from peakopt.evals.references import cache_dir
from peakopt.evals.schedule import schedule

MODEL = "openai/gpt-4o-canned"


@pytest.fixture(scope="session")
def httpserver_listen_address() -> tuple[str, int]:
    return ("127.0.0.1", 0)


def reply(workflow: str) -> dict[str, Any]:
    """The assistant message for a workflow: reasoning as <think> in the text, or as reasoning_content."""
    reasoning, text = ANSWERS[workflow]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if workflow == "thinker":
        message["content"] = f"<think>{reasoning}</think>\n{text}"
    elif reasoning is not None:
        message["reasoning_content"] = reasoning
    return message


class Server:
    """Answers chat completions from ANSWERS and keeps the requests it was sent."""

    def __init__(self, httpserver: HTTPServer) -> None:
        self.requests: list[dict[str, Any]] = []
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self.answer)
        self.url = httpserver.url_for("/v1")

    def answer(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.requests.append(body)
        workflow = workflow_of(body["messages"][-1]["content"])
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": reply(workflow), "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
        return Response(json.dumps(completion), content_type="application/json")


@pytest.fixture
def server(httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Server:
    found = Server(httpserver)
    assert found.url.startswith("http://127.0.0.1:")
    monkeypatch.setenv("OPENAI_BASE_URL", found.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-for-the-local-server")
    monkeypatch.setenv("PEAKOPT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    return found


def test_the_openai_provider_path_gives_peakopt_scores(server: Server, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    (log,) = inspect_eval(
        schedule(suite=str(suite), structured=True),
        model=MODEL,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_retries=0,
        timeout=30,
    )
    values = log_values(log)
    assert len(server.requests) == len(ANSWERS)
    # structured output: the answer's JSON Schema, the workflow's steps as its enum
    request = server.requests[0]
    schema = request["response_format"]["json_schema"]["schema"]
    step = schema["properties"]["schedule"]["items"]["properties"]["step"]
    assert request["response_format"]["type"] == "json_schema"
    assert set(step["enum"]) == {"lookup_order", "fraud_score", "history_scan", "policy_search", "decide"}
    # the reasoning in <think> or reasoning_content is not scored; the final answer is
    assert _reasoning_of(log, "thinker") == [ANSWERS["thinker"][0]]
    assert _reasoning_of(log, "mute") == [ANSWERS["mute"][0]]
    assert values["thinker"]["efficiency"] == pytest.approx(1.0)
    assert values["mute"]["valid"] == 0.0
    assert values["optimal"]["efficiency"] == pytest.approx(1.0)
    assert values["unsafe"]["safe"] == 0.0 and values["garbage"]["valid"] == 0.0
    (reference,) = cache_dir().glob("*.jsonl")
    rows = scored_rows(suite, Path(log.location), reference)
    for workflow, value in values.items():
        assert rows[workflow]["source"] == MODEL
        for key in ("valid", "safe", "gap"):
            assert same(value[key], rows[workflow][key]), (workflow, key)


@pytest.mark.slow
def test_inspect_eval_finds_the_task_through_the_entry_point(server: Server, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", ("optimal", "unsafe"))
    command = [
        *(str(Path(sys.executable).with_name("inspect")), "eval", "peakopt/schedule"),
        *("--model", MODEL, "-T", f"suite={suite}", "-T", "setting=rasc"),
        *("--log-dir", str(tmp_path / "logs"), "--max-retries", "0", "--timeout", "30", "--display", "plain"),
    ]
    done = subprocess.run(command, cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task == "peakopt/schedule"
    values = log_values(log)
    assert values["optimal"]["efficiency"] == pytest.approx(1.0) and values["unsafe"]["efficiency"] == 0.0


def _reasoning_of(log: Any, workflow: str) -> list[str]:
    sample = next(s for s in log.samples if s.metadata["workflow"] == workflow)
    content = sample.output.message.content
    return (
        [c.reasoning for c in content if getattr(c, "type", None) == "reasoning"]
        if isinstance(content, list)
        else []
    )
