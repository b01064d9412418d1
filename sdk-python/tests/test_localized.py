"""Issue 33, part 5: the Python SDK's ``summary`` option (templates per locale, or a function of the arguments and the
locale) and its receipts (``with_receipt``, ``ToolError(receipt=…)``), against a real Parley (offline LLM) and a widget
that says its locale."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import parley
from parley_server import SECRET, ParleyServer
from widget import Widget


async def test_templates_word_the_card_in_the_customers_locale_and_the_receipt_comes_from_the_tool(
    server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    seen: list[str | None] = []

    @client.tool(
        name=unique("cancel_order_"),
        mode="write",
        summary={"en": "Cancel order {order_id}", "es": "Cancelar el pedido {order_id}"},
    )
    def cancel_order(order_id: str, ctx: parley.Context) -> Any:
        """Cancel an order that has not shipped."""
        seen.append(ctx.locale)
        if order_id == "1002":
            raise parley.ToolError("it has already shipped", code="not_cancellable", receipt={"es": "El pedido 1002 ya salió"})
        return parley.with_receipt({"orderId": order_id, "status": "cancelled"}, {"en": f"Order {order_id} cancelled", "es": f"Pedido {order_id} cancelado"})

    await client.start()
    widget = await Widget.open(server.url, unique("py-es-"), locale="es-MX")
    widgets.append(widget)

    await widget.say("please cancel order 1001", "m1")
    confirm = await widget.next(lambda f: f["type"] == "confirm")
    assert confirm["summary"] == "Cancelar el pedido 1001"
    await widget.send({"type": "confirm", "id": confirm["id"], "approve": True})
    receipt = await widget.next(lambda f: f["type"] == "receipt")
    assert (receipt["id"], receipt["ok"], receipt["text"]) == (confirm["id"], True, "Pedido 1001 cancelado")
    await widget.reply()

    await widget.say("please cancel order 1002", "m2")
    refused = await widget.next(lambda f: f["type"] == "confirm")
    await widget.send({"type": "confirm", "id": refused["id"], "approve": True})
    failed = await widget.next(lambda f: f["type"] == "receipt")
    assert (failed["ok"], failed["text"]) == (False, "El pedido 1002 ya salió")
    assert seen == ["es-MX", "es-MX"]


async def test_a_summary_function_is_asked_with_the_arguments_and_the_locale(
    server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    asked: list[tuple[dict[str, Any], str]] = []

    async def summary(args: dict[str, Any], locale: str) -> str | None:
        asked.append((args, locale))
        return f"Bestellung {args['order_id']} stornieren" if locale.startswith("de") else None

    @client.tool(name=unique("cancel_order_"), mode="write", summary=summary)
    def cancel_order(order_id: str) -> dict[str, str]:
        """Cancel an order that has not shipped."""
        return {"orderId": order_id, "status": "cancelled"}

    await client.start()
    german = await Widget.open(server.url, unique("py-de-"), locale="de")
    widgets.append(german)
    await german.say("please cancel order 1001", "m1")
    assert (await german.next(lambda f: f["type"] == "confirm"))["summary"] == "Bestellung 1001 stornieren"
    assert asked == [({"order_id": "1001"}, "de")]

    # No words for this locale: Parley's built-in English summary (from the docstring).
    english = await Widget.open(server.url, unique("py-en-"), locale="en-GB")
    widgets.append(english)
    await english.say("please cancel order 1003", "m1")
    confirm = await english.next(lambda f: f["type"] == "confirm")
    assert "1003" in confirm["summary"] and confirm["summary"].startswith("Cancel")
    assert asked[-1] == ({"order_id": "1003"}, "en-GB")
