"""Load test of ``peakopt serve`` on 127.0.0.1: hundreds of clients, some killed; invariants from its log.

The real server runs as a subprocess on a free port of 127.0.0.1 (TTL 5 s). 300 asyncio clients
(httpx) arrive over about two seconds with random demands (a few over a capacity on their own) and
durations, heartbeat while they run and release with a random outcome; 5 % die once admitted (no
heartbeat, no release), 5 % hang up in the middle of their admit's long poll, and three client
*processes* are killed with SIGKILL while they hold leases (just before the load). Then 200 probes
measure the admission on a free machine. Everything is bounded: each client waits at most
:data:`WAIT` seconds per poll and :data:`POLLS` polls, the whole run at most :data:`DEADLINE`
seconds, and the server is stopped at the end whatever happened.

Checked from the service's own event log: the clamped load never exceeded a capacity, every request
was released, expired or withdrawn, every lease of a dead client expired, and every admit a live
client sent was answered (from the clients' side). Printed: the admission latency seen by the
clients (request sent to admitted answer), p50 and p99, for the requests that fit the free capacity
on arrival and for all.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sidecar_helpers import Server, machine_file, start_server

from peakopt.models import Machine
from peakopt.runtime.sidecar_log import check_run, read_runs

MACHINE = Machine(name="loaded", capacity={"memory_mb": 1000, "cpu": 4})
CLIENTS = 300
TTL = 5.0
POOLS = 15
WAIT = 10.0
POLLS = 60
DEADLINE = 150.0
KILLED_PROCESSES = 3
#: Calls on a free machine after the load (4 clients, 1 core each of 4): the service's own latency.
PROBES = 200

#: A client process that takes a lease, says its id, then heartbeats until it is killed.
HOLDER = """
import sys, time, httpx
url, name = sys.argv[1:3]
with httpx.Client(base_url=url, timeout=30) as http:
    lease = http.post("/v1/admit", json={"name": name, "demand": {"memory_mb": 200}, "wait": 30}).json()
    for _ in range(100):
        if lease["state"] != "waiting":
            break
        lease = http.post("/v1/wait", json={"id": lease["id"], "wait": 30}).json()
    print(lease["id"], lease["state"], flush=True)
    for _ in range(600):
        http.post("/v1/heartbeat", json={"id": lease["id"]})
        time.sleep(0.1)
"""


@dataclass
class Client:
    """What one asyncio client did."""

    name: str
    fate: str  # "live", "dies" (once admitted), "hangs-up" (during its admit)
    lease: str = ""
    sent: int = 0
    answered: int = 0
    latency: float | None = None
    errors: int = 0
    last: object = None


def demand(rng: random.Random) -> dict[str, float]:
    if rng.random() < 0.05:  # over a capacity on its own: clamped, runs alone on that resource
        return {"memory_mb": rng.choice([1500, 4000]), "cpu": rng.uniform(0, 1)}
    if rng.random() < 0.03:
        return {"cpu": 6.0}
    return {"memory_mb": round(rng.uniform(0, 500), 1), "cpu": round(rng.uniform(0, 2), 2)}


async def admitted(http: httpx.AsyncClient, client: Client, body: dict[str, object]) -> dict[str, object]:
    """Admit, polling while waiting; the last answer."""
    client.sent += 1
    answer: dict[str, object] = (await http.post("/v1/admit", json=body)).json()
    client.answered += 1
    for _ in range(POLLS):
        if answer.get("state") != "waiting":
            break
        client.sent += 1
        answer = (await http.post("/v1/wait", json={"id": answer["id"], "wait": WAIT})).json()
        client.answered += 1
    return answer


async def run_client(http: httpx.AsyncClient, client: Client, rng: random.Random) -> None:
    await asyncio.sleep(rng.uniform(0, 2.0))  # arrivals over two seconds
    body = {"name": client.name, "demand": demand(rng), "wait": WAIT, "tool": "load"}
    if client.fate == "hangs-up":
        client.sent += 1
        # hang up in the middle of the long poll (the service keeps the request, then drops it), on
        # a connection of its own: a cancelled request must not disturb the others' connection pool
        async with httpx.AsyncClient(base_url=str(http.base_url)) as own:
            try:
                await asyncio.wait_for(own.post("/v1/admit", json=body), timeout=rng.uniform(0.001, 0.05))
                client.answered += 1
            except TimeoutError:
                pass
        return
    start = time.perf_counter()
    answer = await admitted(http, client, body)
    if answer.get("state") != "admitted":
        client.errors, client.last = client.errors + 1, answer
        return
    client.latency = time.perf_counter() - start
    client.lease = str(answer["id"])
    if client.fate == "dies":
        return  # never heartbeats nor releases: its lease must expire
    duration = rng.uniform(0.01, 0.2)
    end = time.perf_counter() + duration
    while (left := end - time.perf_counter()) > 0:
        await asyncio.sleep(min(left, TTL / 3))
        if end - time.perf_counter() > 0:
            beat = await http.post("/v1/heartbeat", json={"id": client.lease})
            client.errors += beat.status_code != 200
    outcome = rng.choice(["ok"] * 8 + ["failed", "cancelled"])
    done = await http.post("/v1/release", json={"id": client.lease, "outcome": outcome})
    client.errors += done.status_code != 200


def start_holders(server: Server) -> list[tuple[subprocess.Popen[str], str]]:
    """Client processes that hold a lease each (their ids once they say them)."""
    holders = []
    for k in range(KILLED_PROCESSES):
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, server.url, f"holder{k}"], stdout=subprocess.PIPE, text=True
        )
        holders.append(process)
    found = []
    for process in holders:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline().split() if ready else []
        found.append((process, line[0] if line else ""))
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def load(server: Server) -> list[Client]:
    rng = random.Random(2024)
    fates = ["dies"] * (CLIENTS // 20) + ["hangs-up"] * (CLIENTS // 20)
    fates += ["live"] * (CLIENTS - len(fates))
    rng.shuffle(fates)
    clients = [Client(f"c{k}", fate) for k, fate in enumerate(fates)]
    # several connection pools: one httpx pool of hundreds of connections spends seconds on its own
    # bookkeeping per request, which a runtime's clients (one pool each) do not
    size = CLIENTS // POOLS + 5
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    async with contextlib.AsyncExitStack() as stack:
        pools = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=server.url, timeout=WAIT + 30, limits=limits)
            )
            for _ in range(POOLS)
        ]
        tasks = [run_client(pools[k % POOLS], c, random.Random(rng.random())) for k, c in enumerate(clients)]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=DEADLINE)
    return clients


async def probe(server: Server) -> list[float]:
    """Seconds from admit sent to admitted answer, for :data:`PROBES` calls on a free machine, 4 at a time."""
    found: list[float] = []

    async def prober(http: httpx.AsyncClient, k: int) -> None:
        for n in range(PROBES // 4):
            start = time.perf_counter()
            lease = (
                await http.post("/v1/admit", json={"name": f"probe{k}.{n}", "demand": {"cpu": 1}})
            ).json()
            found.append(time.perf_counter() - start)
            assert lease["state"] == "admitted", lease
            await http.post("/v1/release", json={"id": lease["id"]})

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        await asyncio.gather(*(prober(http, k) for k in range(4)))
    return found


async def drained(server: Server, seconds: float) -> dict[str, object]:
    """The status once nothing is held or waiting (dead clients' leases expired), within ``seconds``."""
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        end = time.monotonic() + seconds
        while True:
            status: dict[str, object] = (await http.get("/v1/status")).json()
            if (not status["running"] and not status["waiting"]) or time.monotonic() > end:
                return status
            await asyncio.sleep(0.2)


@pytest.mark.slow
def test_hundreds_of_clients_some_killed_never_overflow_and_lose_nothing(tmp_path: Path) -> None:
    log = tmp_path / "serve.jsonl"
    server = start_server(machine_file(tmp_path, MACHINE), "--ttl", str(TTL), "--log", str(log))
    holders: list[tuple[subprocess.Popen[str], str]] = []
    try:
        holders = start_holders(server)
        time.sleep(0.5)  # heartbeating, then killed: their leases expire while the load runs
        for process, _ in holders:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        started = time.monotonic()
        clients = asyncio.run(load(server))
        took = time.monotonic() - started
        status = asyncio.run(drained(server, WAIT + 4 * TTL + 5))
        probes = asyncio.run(probe(server))
    finally:
        for process, _ in holders:
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()  # the pipe that said the lease's id
        code, err = server.stop()
    assert code == 143, err
    assert not status["running"] and not status["waiting"], status
    assert all(lease for _, lease in holders), holders

    [run] = read_runs(log)
    check = check_run(run)
    assert check.over == [] and check.out_of_order == [] and check.unended == [] and check.stopped
    assert check.peak["memory_mb"] <= 1000 * (1 + 1e-9) and check.peak["cpu"] <= 4 * (1 + 1e-9)
    assert check.peak["memory_mb"] > 900  # the machine was loaded, not idle
    ends = {line["id"]: line for line in run if line["event"] in ("released", "expired", "withdrawn")}
    names = {line["name"]: line["id"] for line in run if line["event"] == "requested"}
    live = [c for c in clients if c.fate == "live"]
    assert all(c.errors == 0 and c.answered == c.sent and c.lease for c in live), [
        c for c in live if c.errors or c.answered != c.sent or not c.lease
    ]
    assert all(ends[c.lease]["event"] == "released" for c in live)
    dead = [c.lease for c in clients if c.fate == "dies"] + [lease for _, lease in holders]
    assert all(ends[lease]["event"] == "expired" for lease in dead)
    # a client that hung up before its request was sent is not in the log; every other one ended
    arrived = [c for c in clients if c.name in names]
    assert all(names[c.name] in ends for c in arrived)
    assert (
        len(arrived) >= CLIENTS - CLIENTS // 20
        and check.counts["requested"] == len(arrived) + KILLED_PROCESSES + PROBES
    )

    free = [c.latency for c in clients if c.latency is not None and c.lease in check.free_on_arrival]
    every = [c.latency for c in clients if c.latency is not None]
    assert len(probes) == PROBES and all(f"probe{k}.0" in check.free_on_arrival for k in range(4))

    def ms(values: list[float]) -> str:
        return f"p50 {percentile(values, 50) * 1000:.1f} ms, p99 {percentile(values, 99) * 1000:.1f} ms"

    print(
        f"\nload: {CLIENTS} clients + {KILLED_PROCESSES} killed processes in {took:.1f} s; "
        f"{check.counts.get('expired', 0)} expired, {check.counts.get('withdrawn', 0)} withdrawn; "
        f"peak memory {check.peak['memory_mb']:g}/1000, cpu {check.peak['cpu']:g}/4\n"
        f"admission latency (admit sent to admitted answer): capacity free, {len(probes)} probes: "
        f"{ms(probes)}; in the load, free on arrival ({len(free)}): {ms(free) if free else '-'}; "
        f"all {len(every)} admitted in the load: {ms(every)}"
    )
