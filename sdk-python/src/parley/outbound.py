"""Outbound messages Parley asks this backend to deliver (provider ``sdk``): a ``send`` frame handed to the
``on_send`` handler and answered with a ``sent`` frame (a failed delivery is reported; Parley retries it)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from .calls import maybe_await
from .protocol import SendFrame, SentFrame


@dataclass(frozen=True)
class OutboundMessage:
    """A message Parley asks your provider to deliver (provider ``sdk``). ``id`` is the same on every attempt."""

    id: str
    channel: Literal["web", "whatsapp"]
    to: str
    content: str


SendHandler = Callable[[OutboundMessage], "str | None | Awaitable[str | None]"]


async def deliver(handler: SendHandler | None, frame: SendFrame) -> SentFrame:
    """Runs the handler (a sync one in a thread) and says how the delivery went."""
    if handler is None:
        return SentFrame(type="sent", id=frame.id, ok=False, error="This SDK has no on_send handler")
    message = OutboundMessage(id=frame.id, channel=frame.channel, to=frame.to, content=frame.content)
    try:
        out = handler(message) if inspect.iscoroutinefunction(handler) else await asyncio.to_thread(handler, message)
        message_id = await maybe_await(out)
        return SentFrame(type="sent", id=frame.id, ok=True, messageId=message_id if isinstance(message_id, str) else None)
    except Exception as err:  # noqa: BLE001 (a failed delivery is reported, Parley retries it)
        return SentFrame(type="sent", id=frame.id, ok=False, error=(str(err) or type(err).__name__)[:4000])
