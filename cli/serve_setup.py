"""What ``peakopt serve`` sets up before serving: the machine, the service and its socket."""

from __future__ import annotations

import errno
import ipaddress
import socket

import click

from peakopt.cli.common import warn
from peakopt.cli.outputs import Output
from peakopt.cli.runs import machine_for
from peakopt.cli.targets import read_each
from peakopt.models import Machine, PeakoptError
from peakopt.runtime.leases import GovernorError, named_live_policy
from peakopt.runtime.profiles import ProfileStore
from peakopt.runtime.sidecar_server import Service, build_service, listen


def serve_machine(paths: tuple[str, ...], ref: str) -> Machine:
    """The machine ``--machine`` names: a machine of the INPUT files, a machine file or bundled:NAME."""
    machine = machine_for(ref, read_each(paths, {}))
    assert machine is not None  # --machine is required
    return machine


def loopback(host: str) -> bool:
    """Whether ``host`` is an address of this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, or one usage-level error naming the address."""
    try:
        return listen(host, port)
    except socket.gaierror as exc:
        raise click.BadParameter(
            f"{host!r} is not an address of this machine ({exc.strerror})", param_hint="'--host'"
        ) from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PeakoptError(
                f"{host}:{port} is in use by another process; name another --port (0: a free one)"
            ) from None
        raise PeakoptError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None


def open_service(
    paths: tuple[str, ...],
    ref: str,
    *,
    host: str,
    port: int,
    ttl: float,
    policy: str,
    log: Output | None,
    profiles: str | None = None,
) -> tuple[Service, socket.socket]:
    """The service for the machine ``ref`` names, and its socket, bound (nothing is served yet)."""
    machine = serve_machine(paths, ref)
    store = ProfileStore(profiles) if profiles is not None else None  # a bad file: one Error line
    try:
        named_live_policy(policy)  # refused before the port is taken
    except GovernorError as exc:
        raise click.BadParameter(str(exc), param_hint="'--policy'") from None
    if not loopback(host):
        warn(
            f"--host {host}: the service has no authentication, and any machine that reaches "
            "this address can take or release its leases"
        )
    sock = bind(host, port)
    try:
        service = build_service(
            machine, ttl=ttl, policy=policy, profiles=store, log=None if log is None else log.target
        )
    except GovernorError as exc:
        sock.close()
        raise click.BadParameter(str(exc), param_hint="'--policy'") from None
    except BaseException:
        sock.close()
        raise
    return service, sock
