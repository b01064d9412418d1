"""A widget protocol client over a real socket (``/widget/ws``), as test/support/widget-client.ts: a customer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

Frame = dict[str, Any]


class Widget:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[Frame] = []
        self._cursor = 0

    @classmethod
    async def open(cls, base_url: str, customer_id: str, locale: str | None = None) -> Widget:
        ws = await connect(base_url.replace("http", "ws", 1) + "/widget/ws", open_timeout=30)
        widget = cls(ws)
        init: Frame = {"type": "init", "customerId": customer_id, "email": f"{customer_id}@example.com"}
        if locale is not None:
            init["locale"] = locale
        await widget.send(init)
        await widget.next(lambda f: f["type"] == "ready")
        return widget

    async def send(self, frame: Frame) -> None:
        await self.ws.send(json.dumps(frame))

    async def say(self, text: str, message_id: str) -> None:
        await self.send({"type": "message", "id": message_id, "text": text})

    async def next(self, pred: Callable[[Frame], bool], timeout: float = 60.0) -> Frame:
        """The next frame (after the last one matched) that matches ``pred``."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for i in range(self._cursor, len(self.frames)):
                if pred(self.frames[i]):
                    self._cursor = i + 1
                    return self.frames[i]
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"no matching frame within {timeout} s; frames: {self.frames[-10:]}")
            self.frames.append(json.loads(await asyncio.wait_for(self.ws.recv(), remaining)))

    async def reply(self) -> str:
        """The assistant's next complete message."""
        frame = await self.next(lambda f: f["type"] == "message" and f.get("role", "assistant") == "assistant")
        return str(frame["text"])

    async def close(self) -> None:
        await self.ws.close()
