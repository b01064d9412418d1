"""Identity tokens and visitors against a real Parley (issue 32 parts 1 and 3, from Python): a token signed by a
third-party JWT library (PyJWT) and one from ``parley.sign_identity`` are accepted by a real widget ``init``; each
forged kind is refused with ``unauthorized`` and close 4001; a visitor's turn calls a read tool exposed with
``visitors=True`` with ``ctx.verified == False``, a signed-in customer's with ``True``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
from websockets.asyncio.client import connect

import parley
from parley_server import SECRET, ParleyServer, running_server
from widget import Frame, Widget

IDENTITY_SECRET = "identity-secret-0123456789abcdef"
OTHER_SECRET = "another-secret-0123456789abcdef!"
Calls = list[tuple[str, parley.Context]]


@pytest.fixture(scope="module")
def identity_server() -> Iterator[ParleyServer]:
    """A Parley of its own that knows the integrator's identity secret and lets visitors chat."""
    config = {"identity": {"jwt_secret": IDENTITY_SECRET, "visitors": True, "allow_anonymous": False}}
    with running_server("parley-py-identity-", extra=config) as s:
        yield s


async def init(server: ParleyServer, frame: Frame) -> tuple[Widget, Frame]:
    """Opens a widget socket, sends ``init`` and returns the first ``ready`` or ``error`` frame."""
    ws = await connect(server.url.replace("http", "ws", 1) + "/widget/ws", open_timeout=30)
    widget = Widget(ws)
    await widget.send({"type": "init", **frame})
    return widget, await widget.next(lambda f: f["type"] in ("ready", "error"))


async def refused(server: ParleyServer, token: str) -> tuple[Frame, int | None]:
    """The error frame an ``init`` with ``token`` gets, and the close code that follows it."""
    widget, first = await init(server, {"authToken": token})
    try:
        assert first["type"] == "error", f"accepted: {first}"
        await asyncio.wait_for(widget.ws.wait_closed(), 60)
        return first, widget.ws.close_code
    finally:
        await widget.close()


def claims(sub: str, **extra: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"sub": sub, "iat": now, "exp": now + 600, **extra}


async def test_a_pyjwt_token_and_a_sign_identity_token_sign_a_customer_in(
    identity_server: ParleyServer, widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    sub = unique("pyjwt-user-")
    token = jwt.encode(claims(sub, email=f"{sub}@example.com"), IDENTITY_SECRET, algorithm="HS256")
    widget, ready = await init(identity_server, {"authToken": token})
    widgets.append(widget)
    assert ready["type"] == "ready", ready
    assert isinstance(ready.get("customerId"), str) and ready["customerId"]
    assert "visitorToken" not in ready

    # The SDK's own token for the same externalId names the same customer.
    own = parley.sign_identity({"external_id": sub, "name": "Ada"}, secret=IDENTITY_SECRET, expires_in=600)
    again, ready_again = await init(identity_server, {"authToken": own})
    widgets.append(again)
    assert ready_again["type"] == "ready", ready_again
    assert ready_again["customerId"] == ready["customerId"]


def _no_exp(sub: str) -> str:
    return jwt.encode({"sub": sub, "iat": int(time.time())}, IDENTITY_SECRET, algorithm="HS256")


FORGED: dict[str, Callable[[str], str]] = {
    "another secret": lambda sub: jwt.encode(claims(sub), OTHER_SECRET, algorithm="HS256"),
    "alg none": lambda sub: jwt.encode(claims(sub), None, algorithm="none"),
    "no exp": _no_exp,
    "expired": lambda sub: jwt.encode({**claims(sub), "exp": int(time.time()) - 120}, IDENTITY_SECRET, algorithm="HS256"),
}


@pytest.mark.parametrize("kind", list(FORGED))
async def test_a_forged_pyjwt_token_is_refused_with_unauthorized_and_close_4001(
    identity_server: ParleyServer, unique: Callable[[str], str], kind: str
) -> None:
    first, code = await refused(identity_server, FORGED[kind](unique("forged-")))
    assert (first["type"], first.get("code")) == ("error", "unauthorized"), first
    assert code == 4001


async def test_a_visitors_turn_calls_a_visitors_tool_unverified_and_a_customers_turn_verified(
    identity_server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    calls: Calls = []
    suffix = unique("_vis")
    client = parley.Client(url=identity_server.url, secret=SECRET)
    clients.append(client)

    @client.tool(name=f"track_parcel{suffix}", visitors=True)
    def track_parcel(parcel_id: str, ctx: parley.Context) -> dict[str, str]:
        """Track a parcel's delivery status.

        Args:
            parcel_id: The parcel number, e.g. 1001.
        """
        calls.append((parcel_id, ctx))
        return {"parcelId": parcel_id, "status": "in transit"}

    await client.start()
    visitor, ready = await init(identity_server, {})
    widgets.append(visitor)
    assert ready["type"] == "ready" and ready["customerId"].startswith("vis_"), ready
    await visitor.say("track parcel 1001 please", "v1")
    assert "in transit" in await visitor.reply()
    assert [(p, c.verified, c.customer_id) for p, c in calls] == [("1001", False, ready["customerId"])]

    token = parley.sign_identity({"external_id": unique("signed-")}, secret=IDENTITY_SECRET, expires_in=600)
    customer, signed_in = await init(identity_server, {"authToken": token})
    widgets.append(customer)
    assert signed_in["type"] == "ready", signed_in
    await customer.say("track parcel 1002 please", "c1")
    assert "in transit" in await customer.reply()
    assert [(p, c.verified) for p, c in calls] == [("1001", False), ("1002", True)]


async def test_a_tool_without_visitors_is_not_offered_to_a_visitor(
    identity_server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    calls: list[str] = []
    suffix = unique("_novis")
    client = parley.Client(url=identity_server.url, secret=SECRET)
    clients.append(client)

    @client.tool(name=f"refund_status{suffix}")
    def refund_status(refund_id: str) -> dict[str, str]:
        """Look up a refund's status.

        Args:
            refund_id: The refund number, e.g. 77.
        """
        calls.append(refund_id)
        return {"refundId": refund_id, "status": "paid"}

    await client.start()
    visitor, ready = await init(identity_server, {})
    widgets.append(visitor)
    assert ready["type"] == "ready", ready
    await visitor.say("what is the refund status of refund 77?", "v1")
    answer = await visitor.reply()
    assert "paid" not in answer and calls == [], (answer, calls)
