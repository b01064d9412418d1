"""A Parley crash and restart that the SDK survives: it reconnects with backoff, registers again, and the next
customer turn invokes its tool."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

import parley
from parley_server import SECRET, ParleyServer, running_server, until
from widget import Widget


@pytest.fixture
def own_server() -> Iterator[ParleyServer]:
    with running_server("parley-py-restart-") as s:
        yield s


async def test_the_client_survives_a_parley_restart_and_registers_again(own_server: ParleyServer) -> None:
    client = parley.Client(url=own_server.url, secret=SECRET)
    calls: list[str] = []

    @client.tool
    def lookup_order(order_id: str) -> dict[str, str]:
        """Find an order's status."""
        calls.append(order_id)
        return {"orderId": order_id, "status": "packed"}

    @client.tool(mode="destructive")
    def delete_account(reason: str) -> None:
        """Delete the customer's account."""

    try:
        await client.start()
        assert client.registrations == 1

        own_server.stop(signal.SIGKILL)  # a crash: no goodbye on the socket
        await until(lambda: not client.connected, what="the client to notice the drop")
        own_server.start()  # same port, same storage
        await until(lambda: client.registrations == 2, timeout=120, what="the client to register again")
        assert set(own_server.functions()) == {"lookup_order", "delete_account"}

        widget = await Widget.open(own_server.url, "py-restart-1")
        try:
            await widget.say("what is the status of order 4242?", "m1")
            assert "packed" in await widget.reply()
        finally:
            await widget.close()
        assert calls == ["4242"]
    finally:
        await client.close()
    assert not client.connected
