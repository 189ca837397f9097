"""The sidecar's HTTP API (FastAPI): admit, wait, heartbeat, release, status, trace, metrics.

Every endpoint takes and returns JSON (``/metrics``: Prometheus text). A request the service
refuses is a 4xx (5xx while it stops) with one sentence, ``{"error": "..."}``: 404 an unknown
lease, 409 an action on a lease its client already ended, 410 a lease that expired or a request
the service withdrew, 422 a bad body (a negative or non-finite demand, a resource the machine
lacks, an unknown dependency, an unknown field), 503 the service stopping. Lease ids go in the
body, not the path: the governor names a call's repeats ``name#2``, ``name#3``...

The rules of waiting, heartbeats and expiry are :mod:`peakopt.runtime.sidecar`'s. The OpenAPI
schema is ``create_app(...).openapi()``; docs/serve-openapi.json is that schema, checked by a
test.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from peakopt.runtime.leases import GovernorError
from peakopt.runtime.sidecar import MAX_WAIT, RequestError, Sidecar, Ticket
from peakopt.runtime.sidecar_metrics import CONTENT_TYPE, Metrics
from peakopt.runtime.trace import trace_json

#: A demand or an expected duration: a finite number >= 0.
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
#: Seconds an admit or wait call may wait for admission.
Wait = Annotated[float, Field(ge=0, le=MAX_WAIT, allow_inf_nan=False)]
#: A lease id, as the service gave it out.
LeaseId = Annotated[
    str, Field(min_length=1, max_length=1000, description="The lease id the service gave out.")
]
STRICT = ConfigDict(extra="forbid")


class AdmitRequest(BaseModel):
    """A call asking for a lease."""

    model_config = STRICT
    name: str = Field(min_length=1, max_length=1000, description="The call's name (its lease id's stem).")
    demand: dict[str, Amount] | None = Field(
        None,
        description="Resource -> amount at the call's peak; every resource must be one of the "
        "machine's. Leave it out to use the profile store's (peakopt serve --profiles).",
    )
    tool: str | None = Field(None, max_length=1000, description="The tool, for the profile store.")
    depends_on: list[LeaseId] = Field(
        default_factory=list, description="Lease ids of earlier calls this one waits for."
    )
    expected: Amount | None = Field(None, description="Expected duration in seconds.")
    wait: Wait = Field(30.0, description="Seconds to wait for admission before answering 202 waiting.")


class WaitRequest(BaseModel):
    """Wait more for a request that was answered ``waiting``."""

    model_config = STRICT
    id: LeaseId
    wait: Wait = Field(30.0, description="Seconds to wait for admission before answering 202 waiting.")


class LeaseRef(BaseModel):
    """A lease, by id."""

    model_config = STRICT
    id: LeaseId


class ReleaseRequest(BaseModel):
    """The end of a call."""

    model_config = STRICT
    id: LeaseId
    outcome: Literal["ok", "failed", "cancelled"] = Field("ok", description="How the call ended.")
    error: str | None = Field(None, max_length=10_000, description="Why it failed, if it did.")


class LeaseView(BaseModel):
    """A lease or a waiting request; times in seconds since the service started."""

    id: str
    name: str
    tool: str | None
    state: Literal["waiting", "admitted", "released", "expired", "withdrawn"]
    demand: dict[str, float]
    requested_at: float
    admitted_at: float | None
    ended_at: float | None
    waited: float | None = Field(description="Seconds from request to admission.")
    expires_in: float | None = Field(
        description="Seconds left before it expires (admitted) or is withdrawn (waiting) "
        "without a heartbeat or a poll; null while a poll is in progress or once ended."
    )
    outcome: str | None
    error: str | None


class StatusView(BaseModel):
    """The service at one instant."""

    machine: str
    policy: str
    ttl: float
    uptime: float
    capacity: dict[str, float]
    in_use: dict[str, float] = Field(description="What the leases hold, each clamped to the capacity.")
    running: list[LeaseView]
    waiting: list[LeaseView]
    counts: dict[str, int] = Field(description="Requests so far: requested, admitted and each end.")


class ErrorView(BaseModel):
    """A refused request: one sentence."""

    error: str


def errors(
    *codes: int, also: dict[int | str, dict[str, Any]] | None = None
) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses``: ``also``'s, then the error codes an endpoint may answer."""
    found: dict[int | str, dict[str, Any]] = dict(also or {})
    found.update({code: {"model": ErrorView} for code in codes})
    return found


def view(sidecar: Sidecar, ticket: Ticket) -> LeaseView:
    """The JSON view of a ticket."""
    lease = ticket.lease
    assert lease is not None  # a ticket reaches an answer once the governor registered it
    t0, now = sidecar.t0, sidecar.clock()
    live = ticket.live and ticket.polls == 0
    return LeaseView(
        id=lease.id,
        name=lease.name,
        tool=lease.tool,
        state=ticket.state,
        demand=dict(lease.demand),
        requested_at=round(lease.requested_at - t0, 6),
        admitted_at=None if lease.admitted_at is None else round(lease.admitted_at - t0, 6),
        ended_at=None if ticket.ended_at is None else round(ticket.ended_at - t0, 6),
        waited=None if lease.admitted_at is None else round(lease.admitted_at - lease.requested_at, 6),
        expires_in=round(max(0.0, ticket.deadline - now), 6) if live else None,
        outcome=ticket.outcome,
        error=ticket.error,
    )


def ticket_answer(sidecar: Sidecar, ticket: Ticket) -> JSONResponse:
    """200 with the lease once admitted (or ended), 202 while it waits."""
    code = 202 if ticket.state == "waiting" else 200
    return JSONResponse(view(sidecar, ticket).model_dump(mode="json"), status_code=code)


def one_line(exc: RequestValidationError) -> str:
    """The first validation error, as ``where: what (got value)``."""
    found = exc.errors()
    if not found:
        return "the request is not valid"
    first = found[0]
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
    text = f"{where}: {first.get('msg', 'is not valid')}"
    if first.get("type") not in ("missing", "json_invalid") and "input" in first:
        text += f" (got {first['input']!r})"
    return text


def create_app(
    sidecar: Sidecar,
    metrics: Metrics,
    *,
    sweep_every: float | None = None,
    stop: Callable[[], Awaitable[None]] | None = None,
) -> FastAPI:
    """The service's ASGI app; its lifespan sweeps expired leases, and stops (``stop``) at the end."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(sidecar.sweeping(sweep_every))
        try:
            yield
        finally:
            sweeper.cancel()
            await (stop or sidecar.stop)()

    app = FastAPI(
        title="peakopt serve",
        summary="A resource governor for live tool calls, over HTTP.",
        version="v1",
        description=__doc__.split("\n\n")[1] if __doc__ else "",
        lifespan=lifespan,
    )
    _handlers(app)
    _routes(app, sidecar, metrics)
    return app


def _handlers(app: FastAPI) -> None:
    """Every refusal as ``{"error": one sentence}``."""

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": one_line(exc)}, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


def _routes(app: FastAPI, sidecar: Sidecar, metrics: Metrics) -> None:
    @app.post(
        "/v1/admit",
        response_model=LeaseView,
        responses=errors(
            410, 422, 503, also={202: {"model": LeaseView, "description": "Not admitted yet: poll /v1/wait"}}
        ),
    )
    async def admit(body: AdmitRequest) -> JSONResponse:
        """Ask for a lease; long-polls up to ``wait`` seconds for admission (200), else 202 waiting."""
        ticket = await sidecar.admit(
            body.name,
            demand=body.demand,
            tool=body.tool,
            depends_on=body.depends_on,
            expected=body.expected,
            wait=body.wait,
        )
        return ticket_answer(sidecar, ticket)

    @app.post(
        "/v1/wait",
        response_model=LeaseView,
        responses=errors(
            404, 409, 410, 422, 503, also={202: {"model": LeaseView, "description": "Still waiting"}}
        ),
    )
    async def wait(body: WaitRequest) -> JSONResponse:
        """Wait up to ``wait`` more seconds for a request answered 202 (an admitted one answers at once)."""
        return ticket_answer(sidecar, await sidecar.wait(body.id, body.wait))

    @app.post("/v1/heartbeat", response_model=LeaseView, responses=errors(404, 409, 410, 422))
    async def heartbeat(body: LeaseRef) -> LeaseView:
        """Keep a lease (or a waiting request) alive for another TTL."""
        return view(sidecar, sidecar.heartbeat(body.id))

    @app.post("/v1/release", response_model=LeaseView, responses=errors(404, 410, 422))
    async def release(body: ReleaseRequest) -> LeaseView:
        """End a lease, or withdraw a waiting request; idempotent."""
        return view(sidecar, sidecar.release(body.id, body.outcome, body.error))

    @app.get("/v1/status", response_model=StatusView)
    async def status() -> StatusView:
        """Capacity, what the leases hold, the running and the waiting requests, the counts."""
        return status_view(sidecar)

    @app.get(
        "/v1/trace",
        responses=errors(409, also={200: {"description": "A peakopt trace (JSON): peakopt score reads it"}}),
    )
    async def trace() -> Response:
        """The trace of every call that has ended, for ``peakopt score``."""
        try:
            found = sidecar.governor.trace()
        except GovernorError as exc:
            raise RequestError(409, str(exc)) from None
        return Response(trace_json(found), media_type="application/json")

    @app.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE: {}}}})
    async def prometheus() -> Response:
        """Prometheus metrics: requests, admitted, released by outcome, waiting, use, wait times."""
        return Response(metrics.text(), media_type=CONTENT_TYPE)


def status_view(sidecar: Sidecar) -> StatusView:
    """The status endpoint's answer."""
    governor = sidecar.governor
    found = governor.status()
    tickets = sidecar.tickets()
    return StatusView(
        machine=governor.machine.name,
        policy=str(getattr(found, "policy", "admission")),
        ttl=sidecar.ttl,
        uptime=round(sidecar.clock() - sidecar.t0, 6),
        capacity=dict(found.capacity),
        in_use={r: round(v, 9) for r, v in found.in_use.items()},
        running=[view(sidecar, t) for t in tickets if t.state == "admitted"],
        waiting=[view(sidecar, t) for t in tickets if t.state == "waiting"],
        counts=dict(sidecar.counts),
    )
