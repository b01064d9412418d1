"""The connections of one ``listen()``: websockets' reconnecting ``connect`` iterator with Parley's backoff.

websockets 17 takes the backoff as ``reconnect_delays``. With websockets 14–16, whose iterator has its own fixed
schedule (up to 90 s), the same loop is run here — connect, yield, on a retryable failure wait the next delay — so
the client keeps Parley's schedule whatever the installed version."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

TAKES_RECONNECT_DELAYS = "reconnect_delays" in inspect.signature(connect.__init__).parameters


async def connections(
    uri: str,
    *,
    delays: Callable[[], Generator[float, None, None]],
    process_exception: Callable[[Exception], Exception | None],
    **options: Any,
) -> AsyncGenerator[ClientConnection, None]:
    """Yields one open connection after another until the consumer stops; ``process_exception`` returns None to
    retry (after the next delay of ``delays()``, reset by a successful connection) or an exception to raise."""
    if TAKES_RECONNECT_DELAYS:
        async for ws in connect(uri, process_exception=process_exception, reconnect_delays=delays, **options):
            yield ws
        return
    series: Generator[float, None, None] | None = None
    while True:
        try:
            async with connect(uri, **options) as ws:
                series = None
                yield ws
        except Exception as exc:  # noqa: BLE001 (what to retry is process_exception's call, as in websockets)
            fatal = process_exception(exc)
            if fatal is exc:
                raise
            if fatal is not None:
                raise fatal from exc
            series = series or delays()
            await asyncio.sleep(next(series))
