"""The Python SDK against a real Parley (offline LLM): tools invoked through real customer turns on the widget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from pydantic import Field

import parley
from parley_server import SECRET, ParleyServer, until
from widget import Widget

Calls = list[tuple[str, dict[str, Any], parley.Context]]


def order_backend(server: ParleyServer, calls: Calls, suffix: str) -> parley.Client:
    """Two tools, one sync (read) and one async (write), named per test."""
    client = parley.Client(url=server.url, secret=SECRET)

    @client.tool(name=f"lookup_order{suffix}")
    def lookup_order(order_id: str, ctx: parley.Context) -> dict[str, str]:
        """Find an order's status and delivery date.

        Args:
            order_id: The order number, e.g. 1001.
        """
        calls.append(("lookup", {"order_id": order_id}, ctx))
        return {"orderId": order_id, "status": "shipped", "eta": "2026-11-25"}

    @client.tool(name=f"cancel_order{suffix}", mode="write")
    async def cancel_order(order_id: str, ctx: parley.Context) -> dict[str, str]:
        """Cancel an order that has not shipped."""
        calls.append(("cancel", {"order_id": order_id}, ctx))
        await asyncio.sleep(0)
        return {"orderId": order_id, "status": "cancelled"}

    return client


async def test_a_read_tool_answers_a_customer_turn(
    server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    calls: Calls = []
    suffix = unique("_r")
    client = order_backend(server, calls, suffix)
    clients.append(client)
    await client.start()
    assert {f"lookup_order{suffix}", f"cancel_order{suffix}"} <= set(server.functions())

    customer = unique("py-read-")
    widget = await Widget.open(server.url, customer)
    widgets.append(widget)
    await widget.say("what is the status of order 1001?", "m1")
    answer = await widget.reply()

    assert "shipped" in answer and "2026-11-25" in answer
    assert [(kind, args) for kind, args, _ in calls] == [("lookup", {"order_id": "1001"})]
    ctx = calls[0][2]
    assert ctx.customer_id and ctx.channel == "web" and ctx.conversation_id.startswith("conv_web_")
    assert ctx.invocation_id.startswith(ctx.conversation_id)


async def test_a_write_tool_waits_for_the_customers_approval_and_a_decline_never_runs_it(
    server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    calls: Calls = []
    client = order_backend(server, calls, unique("_w"))
    clients.append(client)
    await client.start()
    widget = await Widget.open(server.url, unique("py-write-"))
    widgets.append(widget)

    await widget.say("please cancel order 1002", "m1")
    confirm = await widget.next(lambda f: f["type"] == "confirm")
    assert confirm["args"] == {"order_id": "1002"}
    assert calls == []  # Parley asks before it invokes: nothing has run
    await widget.send({"type": "confirm", "id": confirm["id"], "approve": True})
    assert "cancelled" in await widget.reply()
    assert [(kind, args) for kind, args, _ in calls] == [("cancel", {"order_id": "1002"})]

    await widget.say("please cancel order 1003", "m2")
    declined = await widget.next(lambda f: f["type"] == "confirm")
    await widget.send({"type": "confirm", "id": declined["id"], "approve": False})
    assert "nothing was changed" in await widget.reply()
    assert len(calls) == 1


async def test_invalid_arguments_fail_the_call_with_pydantics_message_and_never_reach_the_handler(
    server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    ran: list[int] = []
    suffix = unique("_v")

    @client.tool(name=f"reserve_seats{suffix}")
    def reserve_seats(count: Annotated[int, Field(ge=1, le=10)]) -> dict[str, int]:
        """Reserve seats at the show."""
        ran.append(count)
        return {"reserved": count}

    await client.start()
    widget = await Widget.open(server.url, unique("py-invalid-"))
    widgets.append(widget)
    await widget.say("reserve 0 seats please", "m1")
    answer = await widget.reply()
    assert "didn't work" in answer and "count: Input should be greater than or equal to 1" in answer
    assert ran == []

    await widget.say("reserve 2 seats please", "m2")
    assert "reserved: 2" in await widget.reply()
    assert ran == [2]


async def test_a_tool_exposed_after_start_registers_again_on_the_live_connection(
    server: ParleyServer, clients: list[parley.Client], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    await client.start()
    name = unique("late_tool")

    @client.tool(name=name)
    async def late() -> str:
        """A tool added later."""
        return "late"

    await until(lambda: name in server.functions(), what=f"{name} in Parley's catalogue")
    # Parley's catalogue changes before its `registered` answer reaches the client: wait for that too.
    await until(lambda: client.registrations >= 2, what="a second registration on the live connection")


async def test_a_wrong_secret_is_refused_at_once(server: ParleyServer) -> None:
    client = parley.Client(url=server.url, secret="not-the-secret-0123456789")
    with pytest.raises(parley.ParleyConnectionError) as refused:
        await client.start(timeout=60)
    assert refused.value.status == 401
    await client.close()
