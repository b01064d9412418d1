"""The backend hears when nobody took a handed-over conversation: ``on_handoff`` gets ``phase == "offline"`` (with
``since``) once no agent wrote within ``handoff.offline_after_minutes``, once per handoff, between ``requested`` and
``released``. A Parley of its own: the test moves its clock (``POST /__test__/clock``), which would disturb the
shared server's other tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import parley
from parley_server import SECRET, ParleyServer, running_server, until
from widget import Widget

MIN = 60_000


@pytest.fixture
def own_server() -> Iterator[ParleyServer]:
    with running_server("parley-py-offline-", extra={"handoff": {"offline_after_minutes": 10}}) as s:
        yield s


async def test_on_handoff_gets_offline_once_between_requested_and_released(own_server: ParleyServer) -> None:
    client = parley.Client(url=own_server.url, secret=SECRET)
    handoffs: list[parley.HandoffNotice] = []
    client.on_handoff(handoffs.append)
    widget: Widget | None = None
    try:
        await client.start()
        widget = await Widget.open(own_server.url, "py-offline-1")
        await widget.say("I want to talk to a person", "m1")
        await until(lambda: handoffs, what="the requested notice")
        requested = handoffs[0]
        assert (requested.phase, requested.source, requested.since) == ("requested", "model", None)

        own_server.move_clock(11 * MIN)
        await widget.next(lambda f: f["type"] == "handoff_notice" and f["kind"] == "offline")
        await until(lambda: len(handoffs) >= 2, what="the offline notice")
        offline = handoffs[1]
        assert (offline.phase, offline.conversationId, offline.customerId, offline.channel) == (
            "offline",
            requested.conversationId,
            "py-offline-1",
            "web",
        )
        # The moment the wait is counted from; the requested notice is stamped when written, a little later.
        assert offline.since is not None and requested.at - MIN < offline.since <= requested.at
        assert offline.at - offline.since >= 10 * MIN

        own_server.move_clock(60 * MIN)  # much later: still once per handoff
        await client.conversations.release(requested.conversationId)
        await until(lambda: any(n.phase == "released" for n in handoffs), what="the released notice")
        assert [n.phase for n in handoffs] == ["requested", "offline", "released"]
        assert handoffs[2].by == "agent" and handoffs[2].since is None
    finally:
        if widget is not None:
            await widget.close()
        await client.close()
