"""An order backend on FastAPI, connected to Parley with parley-sdk.

    SERVICE_SDK_SECRET=… PARLEY_URL=http://127.0.0.1:3000 uvicorn fastapi_backend:app

The client starts with the application (it returns once Parley acknowledged the tools) and closes with it. Two tools:
a read one, and a write one the customer confirms first, applied once per invocation id. Two routes: Parley's signed
webhooks, and identity tokens for the widget of a signed-in user.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI, HTTPException, Request

import parley

client = parley.Client(url=os.environ.get("PARLEY_URL", "http://127.0.0.1:3000"), secret=os.environ.get("SERVICE_SDK_SECRET", ""))


@dataclass
class Order:
    id: str
    owner: str
    status: str
    eta: str


ORDERS = {
    "1001": Order("1001", "user-42", "shipped", "2026-11-25"),
    "1002": Order("1002", "user-42", "processing", "2026-11-30"),
}
APPLIED: dict[str, dict[str, str]] = {}  # invocation id → result: a retried call is answered, not applied again


@client.tool
def lookup_order(order_id: str, ctx: parley.Context) -> dict[str, str]:
    """Find an order's status and delivery date.

    Args:
        order_id: The order number, e.g. 1001.
    """
    order = ORDERS.get(order_id)
    if order is None:
        raise parley.ToolError(f"No order {order_id}", code="not_found")
    return {"orderId": order.id, "status": order.status, "eta": order.eta}


@client.tool(mode="write")
async def cancel_order(order_id: str, ctx: parley.Context) -> dict[str, str]:
    """Cancel an order that has not shipped.

    Args:
        order_id: The order number.
    """
    if ctx.invocation_id in APPLIED:
        return APPLIED[ctx.invocation_id]
    order = ORDERS.get(order_id)
    if order is None:
        raise parley.ToolError(f"No order {order_id}", code="not_found")
    if order.status == "shipped":
        raise parley.ToolError(f"Order {order_id} has shipped: it can be returned, not cancelled", code="shipped")
    order.status = "cancelled"
    APPLIED[ctx.invocation_id] = {"orderId": order.id, "status": order.status}
    return APPLIED[ctx.invocation_id]


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    await client.start()
    try:
        yield
    finally:
        await client.close()


app = FastAPI(lifespan=lifespan)


@app.post("/parley/webhook")
async def parley_webhook(request: Request) -> dict[str, bool]:
    try:
        event = parley.verify_webhook(
            await request.body(), request.headers.get(parley.SIGNATURE_HEADER), os.environ.get("PARLEY_WEBHOOK_SECRET", "")
        )
    except parley.WebhookVerificationError as err:
        raise HTTPException(status_code=401, detail=str(err)) from None
    if event.type == "handoff.requested":
        print("a person is needed in", event.data.get("conversationId"))
    elif event.type == "handoff.offline":  # opt-in: only for an endpoint whose `events` list names it
        print("nobody took", event.data.get("conversationId"), "for", event.data.get("waitedMinutes"), "min: page the on-call")
    return {"ok": True}


@app.get("/parley/identity-token")
def identity_token(user_id: str) -> dict[str, str]:
    """For the widget of a signed-in user (here the user id comes from the query: use your own session)."""
    token = parley.sign_identity({"external_id": user_id}, secret=os.environ.get("SERVICE_IDENTITY_SECRET", ""), expires_in=3600)
    return {"token": token}
