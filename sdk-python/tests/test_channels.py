"""The Python SDK against a real Parley: the send provider and ingest (WhatsApp, provider ``sdk``), and the human
handoff helpers (live notices and the agent API over HTTP)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import parley
from parley_server import SECRET, ParleyServer, until
from widget import Widget


async def test_ingest_runs_a_whatsapp_turn_whose_tool_call_and_reply_reach_this_backend(
    server: ParleyServer, clients: list[parley.Client], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    seen: list[parley.Context] = []
    sent: list[parley.OutboundMessage] = []
    suffix = unique("_wa")

    @client.tool(name=f"track_parcel{suffix}")
    async def track_parcel(parcel_id: str, ctx: parley.Context) -> dict[str, str]:
        """Track a parcel and tell where it is."""
        seen.append(ctx)
        return {"parcelId": parcel_id, "status": "out for delivery"}

    @client.on_send
    async def deliver(message: parley.OutboundMessage) -> str:
        sent.append(message)
        return f"own-{len(sent)}"

    await client.start()
    phone = f"+1555010{unique('')[-4:].zfill(4)}"
    ack = await client.ingest(channel="whatsapp", from_=phone, text="track parcel P77 please", message_id=unique("wamid.py"))
    assert ack.ok, ack.error

    await until(lambda: sent, what="the reply delivered through on_send")
    assert seen and seen[0].channel == "whatsapp" and seen[0].external_id == phone
    assert sent[0].to == phone and sent[0].channel == "whatsapp"
    assert "P77" in sent[0].content and "out for delivery" in sent[0].content
    assert sent[0].id.startswith("out:")


async def test_a_failed_delivery_is_retried_with_the_same_id(
    server: ParleyServer, clients: list[parley.Client], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    attempts: list[str] = []

    @client.on_send
    def deliver(message: parley.OutboundMessage) -> str:  # a sync provider: runs in a worker thread
        attempts.append(message.id)
        if len(attempts) == 1:
            raise RuntimeError("provider hiccup")
        return "own-1"

    await client.start()
    ack = await client.ingest(channel="whatsapp", from_=f"+1555020{unique('')[-4:].zfill(4)}", text="hello")
    assert ack.ok, ack.error
    await until(lambda: len(attempts) >= 2, what="a second delivery attempt")
    assert attempts[1] == attempts[0]


async def test_ingest_without_a_connection_or_with_a_frame_the_protocol_refuses_says_so_instead_of_raising() -> None:
    client = parley.Client(url="http://127.0.0.1:9", secret=SECRET)
    ack = await client.ingest(channel="whatsapp", from_="+15550001111", text="hello")
    assert (ack.ok, ack.error) == (False, "not connected")
    empty = await client.ingest(channel="whatsapp", from_="+15550001111", text="")
    assert empty.ok is False and empty.error == "text: String should have at least 1 character"


async def test_handoff_helpers_hand_over_reply_as_a_person_read_list_and_release(
    server: ParleyServer, clients: list[parley.Client], widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    handoffs: list[parley.HandoffNotice] = []
    said: list[parley.CustomerMessageNotice] = []
    client.on_handoff(handoffs.append)

    @client.on_customer_message
    async def customer_wrote(notice: parley.CustomerMessageNotice) -> None:
        said.append(notice)

    await client.start()
    widget = await Widget.open(server.url, unique("py-handoff-"))
    widgets.append(widget)
    conversation = str(widget.frames[0]["conversationId"])
    await widget.say("hello", "m0")  # a conversation exists once the customer wrote
    await widget.reply()

    state = await client.conversations.handoff(conversation, reason="VIP customer")
    assert state.conversationId == conversation and state.state == "withHuman"
    await until(lambda: handoffs, what="the live handoff notice")
    assert (handoffs[0].phase, handoffs[0].reason, handoffs[0].source) == ("requested", "VIP customer", "api")

    await widget.say("is anyone there?", "m1")
    await until(lambda: said, what="the live customer_message notice")
    assert said[0].text == "is anyone there?" and said[0].conversationId == conversation

    sent = await client.conversations.reply(conversation, "Hi, Alex here.", author="Alex")
    assert sent.conversationId == conversation
    agent = await widget.next(lambda f: f["type"] == "message" and f.get("role") == "agent")
    assert agent["text"] == "Hi, Alex here." and agent["author"] == {"name": "Alex"}

    view = await client.conversations.get(conversation, limit=10)
    assert ("user", "is anyone there?") in [(m.role, m.text) for m in view.messages]
    assert (view.messages[-1].role, view.messages[-1].text) == ("agent", "Hi, Alex here.")
    assert view.handoff is not None and view.handoff.reason == "VIP customer"
    inbox = await client.conversations.with_human()
    assert conversation in [item.conversationId for item in inbox.items]

    released = await client.conversations.release(conversation)
    assert released.state != "withHuman"
    await until(lambda: len(handoffs) >= 2, what="the released notice")
    assert handoffs[1].phase == "released"


async def test_the_agent_api_refusals_are_errors_with_status_and_code(
    server: ParleyServer, clients: list[parley.Client], unique: Callable[[str], str]
) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    clients.append(client)
    with pytest.raises(parley.ParleyApiError) as missing:
        await client.conversations.get(unique("conv_web_nobody-"))
    assert (missing.value.status, missing.value.code) == (404, "conversation_not_found")
    wrong = parley.Client(url=server.url, secret="not-the-secret-0123456789")
    with pytest.raises(parley.ParleyApiError) as refused:
        await wrong.conversations.with_human()
    assert refused.value.status == 401


async def test_download_media_reports_parleys_refusal_with_its_status_and_code(server: ParleyServer) -> None:
    client = parley.Client(url=server.url, secret=SECRET)
    # With provider sdk there is no Graph API to download from, so no media route: Parley's 404 with its code.
    with pytest.raises(parley.ParleyMediaError) as refused:
        await client.download_media("1234567890")
    assert (refused.value.status, refused.value.code) == (404, "not_found")
    unreachable = parley.Client(url="http://127.0.0.1:9", secret=SECRET)
    with pytest.raises(parley.ParleyMediaError) as down:
        await unreachable.download_media("1234567890", timeout=30)
    assert (down.value.status, down.value.code) == (0, "network_error")
