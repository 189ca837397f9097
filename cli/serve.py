"""``peakopt serve``: the governor as an HTTP sidecar, for agent runtimes in any language.

Only click and the CLI's light helpers are imported at the top: ``peakopt serve --help`` loads
neither FastAPI, uvicorn, prometheus_client nor pydantic (a test checks, and times it).
"""

from __future__ import annotations

import click

from peakopt.campaign.ranges import SECONDS
from peakopt.cli.messages import note, plural, quiet_option, wrote

#: The address the service binds by default: this machine only.
HOST = "127.0.0.1"
#: The default port.
PORT = 8731
#: The default lease TTL (seconds without a heartbeat).
TTL = 30.0


@click.command("serve")
@click.argument("paths", nargs=-1, metavar="[INPUT]...")
@click.option(
    "--machine",
    "machine_ref",
    required=True,
    metavar="NAME|FILE",
    help="The machine whose capacities every request is admitted under: a machine file, "
    "bundled:NAME, or the name of a machine of the INPUT files.",
)
@click.option(
    "--host",
    default=HOST,
    show_default=True,
    metavar="ADDRESS",
    help="The address to bind (this machine only).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=PORT,
    show_default=True,
    help="The port (0: a free one, printed at the start).",
)
@click.option(
    "--ttl",
    type=SECONDS,
    default=TTL,
    show_default=True,
    help="A lease not heartbeated (a waiting request not polled) for this many seconds is released "
    "as expired (withdrawn), so a client that dies never keeps its capacity.",
)
@click.option(
    "--policy",
    metavar="NAME",
    default="admission",
    show_default=True,
    help="Which waiting requests go first: admission, admission:strict (FIFO), cap:K or serial.",
)
@click.option(
    "--profiles",
    "profiles_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A profile store (peakopt profile --store FILE), read at the start: the demand and "
    "expected duration of a call that declares none, by its tool (else its name).",
)
@click.option(
    "--log",
    "log_path",
    metavar="FILE",
    help="Append every event (start, requested, admitted, released, expired, withdrawn, stop) to "
    "FILE as JSON Lines, flushed as it happens.",
)
@click.option(
    "--trace",
    "trace_path",
    metavar="FILE",
    help="When the service stops, write the trace of every call that ended (for peakopt score).",
)
@quiet_option
def serve(
    paths: tuple[str, ...],
    machine_ref: str,
    host: str,
    port: int,
    ttl: float,
    policy: str,
    profiles_path: str | None,
    log_path: str | None,
    trace_path: str | None,
) -> None:
    """Serve the governor over HTTP: admit, wait, heartbeat, release, status, trace, metrics.

    A client POSTs /v1/admit with the call's demand and waits (a long poll,
    its "wait" seconds) until it fits the machine beside the calls already
    admitted; 202 "waiting" means poll /v1/wait. It heartbeats while the
    call runs and releases the lease when the call ends; a lease not
    heartbeated for --ttl seconds expires. GET /v1/status, /v1/trace and
    /metrics (Prometheus) show the state. Binds 127.0.0.1 unless --host
    says otherwise; SIGINT or SIGTERM stops it cleanly (exit 130 or 143).

    Example: peakopt serve --machine machine.json --port 8731 --log serve.jsonl
    """
    # here, not at the top: --help loads neither the service's libraries nor pydantic
    from peakopt.cli.group import Interrupted, interrupted
    from peakopt.cli.outputs import claim
    from peakopt.cli.serve_setup import open_service
    from peakopt.runtime.sidecar_server import run_service

    inputs = (*paths, machine_ref, *([profiles_path] if profiles_path else []))
    log_out = claim(log_path, inputs, option="--log")
    trace_out = claim(trace_path, inputs, option="--trace")
    service, sock = open_service(
        paths, machine_ref, host=host, port=port, ttl=ttl, policy=policy, log=log_out, profiles=profiles_path
    )
    bound = sock.getsockname()
    machine = service.governor.machine
    note(
        f"serving {machine.name!r} on http://{_address(bound[0])}:{bound[1]} "
        f"(ttl {ttl:g} s, policy {policy}); stop with Ctrl-C"
    )
    signum = run_service(service, sock)
    service.close()
    counts = service.sidecar.counts
    served = f"{plural(counts['requested'], 'request')}, {counts['expired']} expired"
    if log_path is not None:
        wrote(log_path, served)
    if trace_out is not None:
        text = service.trace_json()
        if text is None:
            note(f"no call ended: {trace_path} not written")
        else:
            trace_out.write_text(text)
            wrote(trace_path, f"trace of {plural(counts['released'] + counts['expired'], 'call')}")
    if signum is not None:
        interrupted(Interrupted(signum), f"stopped after {served}")


def _address(host: str) -> str:
    return f"[{host}]" if ":" in host else host
