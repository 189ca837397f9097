"""The sidecar's HTTP API in this process (httpx over ASGI): every endpoint, every refusal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from sidecar_helpers import Clock, client, service

from peakopt.cli.main import cli
from peakopt.runtime.profiles import ProfileStore
from peakopt.runtime.sidecar_log import check_run, read_runs
from peakopt.runtime.sidecar_server import Service


def run(body: Callable[[httpx.AsyncClient, Service, Clock], Awaitable[Any]], **options: Any) -> Any:
    clock = Clock()
    found = service(clock=clock, **options)

    async def main() -> Any:
        async with client(found) as http:
            return await body(http, found, clock)

    try:
        return asyncio.run(main())
    finally:
        found.close()


def test_admit_wait_heartbeat_release_status_and_metrics(tmp_path: Path) -> None:
    async def body(http: httpx.AsyncClient, found: Service, clock: Clock) -> None:
        first = await http.post(
            "/v1/admit", json={"name": "embed", "demand": {"memory_mb": 700}, "tool": "e"}
        )
        assert first.status_code == 200
        assert first.json() | {"requested_at": 0} == {
            "id": "embed",
            "name": "embed",
            "tool": "e",
            "state": "admitted",
            "demand": {"memory_mb": 700.0},
            "requested_at": 0,
            "admitted_at": first.json()["requested_at"],
            "ended_at": None,
            "waited": 0.0,
            "expires_in": 10.0,
            "outcome": None,
            "error": None,
        }
        again = await http.post("/v1/admit", json={"name": "embed", "demand": {"memory_mb": 700}, "wait": 0})
        assert again.status_code == 202 and again.json()["id"] == "embed#2"
        assert again.json()["state"] == "waiting"
        clock.advance(4)
        beat = await http.post("/v1/heartbeat", json={"id": "embed"})
        assert beat.status_code == 200 and beat.json()["expires_in"] == 10.0
        status = (await http.get("/v1/status")).json()
        assert status["in_use"] == {"cpu": 0.0, "memory_mb": 700.0}
        assert [r["id"] for r in status["running"]] == ["embed"]
        assert [w["id"] for w in status["waiting"]] == ["embed#2"]
        assert status["counts"]["requested"] == 2 and status["ttl"] == 10.0
        poll = asyncio.create_task(http.post("/v1/wait", json={"id": "embed#2", "wait": 30}))
        await asyncio.sleep(0.05)
        done = await http.post("/v1/release", json={"id": "embed", "outcome": "failed", "error": "boom"})
        assert done.status_code == 200 and done.json()["state"] == "released"
        assert (done.json()["outcome"], done.json()["error"]) == ("failed", "boom")
        admitted = await poll
        assert admitted.status_code == 200 and admitted.json()["waited"] == 4.0
        text = (await http.get("/metrics")).text
        for line in (
            "peakopt_requests_total 2.0",
            "peakopt_admitted_total 2.0",
            'peakopt_released_total{outcome="failed"} 1.0',
            "peakopt_waiting 0.0",
            "peakopt_running 1.0",
            'peakopt_capacity{resource="memory_mb"} 1000.0',
            'peakopt_in_use{resource="memory_mb"} 700.0',
            "peakopt_wait_seconds_count 2.0",
            'peakopt_wait_seconds_bucket{le="5.0"} 2.0',
            'peakopt_wait_seconds_bucket{le="2.5"} 1.0',
        ):
            assert line in text.splitlines(), line

    run(body, log=tmp_path / "log.jsonl")
    [lines] = read_runs(tmp_path / "log.jsonl")
    assert [line["event"] for line in lines] == [
        "start", "requested", "admitted", "requested", "released", "admitted", "released", "stop"
    ]  # fmt: skip
    assert lines[-2]["error"] == "the service stopped"  # still held when it stopped


def test_an_expired_lease_is_gone_and_logged_as_expired(tmp_path: Path) -> None:
    async def body(http: httpx.AsyncClient, found: Service, clock: Clock) -> None:
        await http.post("/v1/admit", json={"name": "a", "demand": {"memory_mb": 1000}})
        clock.advance(11)
        found.sidecar.sweep()
        for path in ("/v1/heartbeat", "/v1/release"):
            gone = await http.post(path, json={"id": "a"})
            assert gone.status_code == 410
            assert gone.json() == {"error": "lease 'a' expired: no heartbeat for 10 s"}
        text = (await http.get("/metrics")).text
        assert 'peakopt_released_total{outcome="expired"} 1.0' in text

    run(body, log=tmp_path / "log.jsonl")
    check = check_run(read_runs(tmp_path / "log.jsonl")[0])
    assert check.counts["expired"] == 1 and check.unended == [] and check.stopped


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    ("path", "body", "status", "error"),
    [
        (
            "/v1/admit",
            {"name": "x", "demand": {"memory_mb": -5}},
            422,
            "demand.memory_mb: Input should be greater than or equal to 0 (got -5)",
        ),
        (
            "/v1/admit",
            '{"name": "x", "demand": {"memory_mb": NaN}}',
            422,
            "demand.memory_mb: Input should be a finite number (got nan)",
        ),
        (
            "/v1/admit",
            '{"name": "x", "demand": {"memory_mb": Infinity}}',
            422,
            "demand.memory_mb: Input should be a finite number (got inf)",
        ),
        (
            "/v1/admit",
            {"name": "x", "demand": {"memory_mb": "lots"}},
            422,
            "demand.memory_mb: Input should be a valid number, unable to parse string as a number "
            "(got 'lots')",
        ),
        (
            "/v1/admit",
            {"name": "x", "demand": {"gpu_mb": 1}},
            422,
            "call 'x': resource 'gpu_mb' is not one of the machine's (box: cpu, memory_mb)",
        ),
        (
            "/v1/admit",
            {"name": "x", "demand": {}, "depends_on": ["ghost"]},
            422,
            "call 'x' depends on 'ghost', which has not been requested (a call depends on earlier calls "
            "only, by lease id)",
        ),
        ("/v1/admit", {"name": "x"}, 422, "call 'x': no demand declared"),
        ("/v1/admit", {"demand": {}}, 422, "name: Field required"),
        (
            "/v1/admit",
            {"name": "", "demand": {}},
            422,
            "name: String should have at least 1 character (got '')",
        ),
        (
            "/v1/admit",
            {"name": "x", "demand": {}, "wait": 301},
            422,
            "wait: Input should be less than or equal to 300 (got 301)",
        ),
        (
            "/v1/admit",
            {"name": "x", "demand": {}, "memory": 1},
            422,
            "memory: Extra inputs are not permitted (got 1)",
        ),
        ("/v1/admit", "{not json", 422, "JSON decode error"),
        ("/v1/wait", {"id": "ghost"}, 404, "no lease 'ghost': this service never gave it out"),
        ("/v1/heartbeat", {"id": "ghost"}, 404, "no lease 'ghost'"),
        ("/v1/heartbeat", {}, 422, "id: Field required"),
        ("/v1/release", {"id": "ghost"}, 404, "no lease 'ghost'"),
        (
            "/v1/release",
            {"id": "held", "outcome": "expired"},
            422,
            "outcome: Input should be 'ok', 'failed' or 'cancelled' (got 'expired')",
        ),
        ("/v1/nothing", {}, 404, "Not Found"),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("/") else None,
)
def test_bad_requests_get_one_clear_error(path: str, body: Any, status: int, error: str) -> None:
    async def call(http: httpx.AsyncClient, found: Service, clock: Clock) -> httpx.Response:
        await http.post("/v1/admit", json={"name": "held", "demand": {"memory_mb": 1}})
        content = body if isinstance(body, str) else json.dumps(body)
        return await http.post(path, content=content, headers=JSON)

    answer = run(call)
    assert answer.status_code == status
    assert list(answer.json()) == ["error"] and error in answer.json()["error"], answer.json()
    assert "\n" not in answer.json()["error"]


def test_method_not_allowed_and_the_trace_before_any_end() -> None:
    async def body(http: httpx.AsyncClient, found: Service, clock: Clock) -> None:
        wrong = await http.get("/v1/admit")
        assert wrong.status_code == 405 and wrong.json() == {"error": "Method Not Allowed"}
        early = await http.get("/v1/trace")
        assert early.status_code == 409 and "no call has ended yet" in early.json()["error"]

    run(body)


def test_the_trace_is_scored_by_peakopt_score(tmp_path: Path) -> None:
    async def body(http: httpx.AsyncClient, found: Service, clock: Clock) -> str:
        for k in range(4):
            lease = (
                await http.post("/v1/admit", json={"name": f"c{k}", "demand": {"memory_mb": 600}, "wait": 0})
            ).json()
            assert lease["state"] == ("admitted" if k == 0 else "waiting")
        for k in range(4):
            clock.advance(1.0)
            await http.post("/v1/release", json={"id": f"c{k}"})
            if k < 3:
                assert (await http.post("/v1/wait", json={"id": f"c{k + 1}", "wait": 1})).json()[
                    "state"
                ] == "admitted"
        return (await http.get("/v1/trace")).text

    path = tmp_path / "trace.json"
    path.write_text(run(body))
    result = CliRunner().invoke(cli, ["score", str(path), "--json"])
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in result.stdout.splitlines()]
    assert row["safe"] is True and row["makespan"] == pytest.approx(4.0)


def test_a_call_without_a_demand_takes_its_tools_from_the_profile_store(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path / "profiles.json")
    for seconds, memory in ((1.0, 300.0), (2.0, 500.0)):
        store.observe("embedder", seconds=seconds, demand={"memory_mb": memory})

    async def body(http: httpx.AsyncClient, found: Service, clock: Clock) -> None:
        lease = await http.post("/v1/admit", json={"name": "embed", "tool": "embedder"})
        assert lease.status_code == 200 and lease.json()["demand"] == {"memory_mb": 480.0}  # the p90
        unknown = await http.post("/v1/admit", json={"name": "other"})
        assert unknown.status_code == 422 and "'other' is not in the profile store" in unknown.json()["error"]

    run(body, profiles=store)
