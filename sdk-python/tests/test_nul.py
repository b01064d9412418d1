"""A tool whose answer holds NUL (U+0000), which no PostgreSQL text can keep: Parley refuses the result frame, the
model is told the call failed, and the backend stays connected for the next call (RELIABILITY.md, NUL)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

import parley
from parley_server import SECRET, ParleyServer, until
from widget import Widget


async def test_a_result_holding_nul_fails_its_call_and_the_backend_keeps_working(
    server: ParleyServer,
    clients: list[parley.Client],
    widgets: list[Widget],
    unique: Callable[[str], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    suffix = unique("_nul")
    client = parley.Client(url=server.url, secret=SECRET)
    clean = {"on": False}

    @client.tool(name=f"lookup_order{suffix}")
    def lookup_order(order_id: str) -> dict[str, str]:
        """Find an order's status and delivery date.

        Args:
            order_id: The order number, e.g. 1001.
        """
        return {"orderId": order_id, "status": "shipped" if clean["on"] else "ship\x00ped", "eta": "2026-11-25"}

    clients.append(client)
    await client.start()
    widget = await Widget.open(server.url, unique("py-nul-"))
    widgets.append(widget)

    with caplog.at_level(logging.WARNING, logger="parley"):
        await widget.say("what is the status of order 1001?", "m1")
        first = await widget.reply()
        # Parley answered the frame with its error: the SDK logs it and carries on.
        await until(lambda: "Parley reported bad_frame" in caplog.text, what="the refusal in the SDK's log")
    assert "\x00" not in first and "shipped" not in first and "2026-11-25" not in first

    clean["on"] = True
    await widget.say("and the status of order 1001 now?", "m2")
    second = await widget.reply()
    assert "shipped" in second and "2026-11-25" in second
