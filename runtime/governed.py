"""Running code under a governor: context managers and a decorator that release however the body ends.

:class:`Governed` holds :meth:`~Governed.admit`, :meth:`~Governed.admit_sync` and
:meth:`~Governed.govern` on top of the governor's ``acquire``, ``acquire_blocking`` and
``release`` (:class:`~peakopt.runtime.governor.Governor` inherits them). The outcome of a
release says how the body ended: ``ok`` (it returned), ``cancelled`` (the task was cancelled:
``asyncio.CancelledError``, a timeout of ``asyncio.timeout``) or ``failed`` (any other
exception, named in the error). Results and exceptions pass through unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, overload

from peakopt.runtime.leases import CallOutcome, Lease

F = TypeVar("F", bound=Callable[..., Any])


def _ending(exc: BaseException | None) -> tuple[CallOutcome, str | None]:
    if exc is None:
        return "ok", None
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit | GeneratorExit):
        return "cancelled", type(exc).__name__
    return "failed", f"{type(exc).__name__}: {exc}"


class Governed:
    """The governed forms of a governor's acquire and release (see the module docstring)."""

    async def acquire(
        self,
        name: str,
        *,
        demand: Mapping[str, float] | None = None,
        tool: str | None = None,
        depends_on: Iterable[str | Lease] = (),
        expected: float | None = None,
    ) -> Lease:
        """Wait until admitted (the governor's)."""
        raise NotImplementedError

    def acquire_blocking(
        self,
        name: str,
        *,
        demand: Mapping[str, float] | None = None,
        tool: str | None = None,
        depends_on: Iterable[str | Lease] = (),
        expected: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Block until admitted (the governor's)."""
        raise NotImplementedError

    def release(
        self,
        lease: Lease,
        *,
        outcome: CallOutcome = "ok",
        error: str | None = None,
        usage: Mapping[str, float] | None = None,
    ) -> None:
        """End a call (the governor's)."""
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def admit(self, name: str, **keywords: Any) -> AsyncIterator[Lease]:
        """``async with governor.admit(name, demand=...) as lease:`` runs the block once admitted.

        ``keywords`` are :meth:`acquire`'s; the lease is released however the block ends.
        """
        lease = await self.acquire(name, **keywords)
        try:
            yield lease
        except BaseException as exc:
            outcome, error = _ending(exc)
            self.release(lease, outcome=outcome, error=error)
            raise
        self.release(lease)

    @contextlib.contextmanager
    def admit_sync(self, name: str, **keywords: Any) -> Iterator[Lease]:
        """``with governor.admit_sync(name, demand=...) as lease:``, blocking this thread until admitted.

        ``keywords`` are :meth:`acquire_blocking`'s (``timeout`` included).
        """
        lease = self.acquire_blocking(name, **keywords)
        try:
            yield lease
        except BaseException as exc:
            outcome, error = _ending(exc)
            self.release(lease, outcome=outcome, error=error)
            raise
        self.release(lease)

    @overload
    def govern(self, fn: F, /) -> F: ...

    @overload
    def govern(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        tool: str | None = None,
        demand: Mapping[str, float] | None = None,
        expected: float | None = None,
    ) -> Callable[[F], F]: ...

    def govern(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        tool: str | None = None,
        demand: Mapping[str, float] | None = None,
        expected: float | None = None,
    ) -> Any:
        """Decorate an async or sync callable: each call of it is admitted first, released at its end.

        A sync callable blocks its thread until admitted: run it in a thread
        (``await asyncio.to_thread(f, ...)``) from async code.

        Parameters
        ----------
        fn
            The callable (``@governor.govern``), or None (``@governor.govern(demand=...)``).
        name
            The calls' name (default: the callable's ``__name__``).
        tool
            The tool name the profile store is asked (default: the name).
        demand, expected
            As :meth:`acquire`'s; without ``demand``, the profile store's for the tool.
        """

        def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
            call: str = name or str(getattr(func, "__name__", "call"))
            keywords = {"tool": tool if tool is not None else call, "demand": demand, "expected": expected}
            if inspect.iscoroutinefunction(func):

                @functools.wraps(func)
                async def governed_async(*args: Any, **kwargs: Any) -> Any:
                    async with self.admit(call, **keywords):
                        return await func(*args, **kwargs)

                return governed_async

            @functools.wraps(func)
            def governed_sync(*args: Any, **kwargs: Any) -> Any:
                with self.admit_sync(call, **keywords):
                    return func(*args, **kwargs)

            return governed_sync

        return wrap(fn) if fn is not None else wrap
