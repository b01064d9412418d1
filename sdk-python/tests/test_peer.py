"""What a real Parley rarely does on demand, played by a scripted peer on a real socket: the same invoke id twice
while the first run is in flight, an unknown function, a frame the SDK cannot read, a send with no provider, a
result that is not JSON, connections refused in a row (the backoff schedule), and a 401 after a registration."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

import parley
from parley.protocol import parse_client_frame

CONTEXT = {"customerId": "c1", "channel": "web", "conversationId": "conv_web_c1"}
Script = Callable[[ServerConnection, "Peer"], Awaitable[None]]


@dataclass
class Peer:
    """A scripted stand-in for Parley's ``/sdk``: refuses with ``refuse`` statuses first, then runs ``script``."""

    script: Script
    refuse: list[int] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[float] = field(default_factory=list)
    server: Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        port = next(iter(self.server.sockets)).getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def process_request(self, _: ServerConnection, request: Request) -> Response | None:
        self.attempts.append(time.monotonic())
        assert request.headers["Authorization"] == "Bearer peer-secret-0123456789"
        if self.refuse:
            status = self.refuse.pop(0)
            return Response(status, HTTPStatus(status).phrase, Headers(), b"refused")
        return None

    async def handler(self, ws: ServerConnection) -> None:
        register = await self.recv(ws)
        assert register["type"] == "register"
        await ws.send(json.dumps({"type": "registered", "functions": len(register["functions"])}))
        await self.script(ws, self)

    async def recv(self, ws: ServerConnection) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 60))
        parse_client_frame(frame)  # every frame the SDK sends is one the shared schema accepts
        self.received.append(frame)
        return frame


@pytest.fixture
async def peers() -> AsyncIterator[Callable[..., Awaitable[Peer]]]:
    started: list[Peer] = []

    async def start(script: Script, refuse: list[int] | None = None) -> Peer:
        peer = Peer(script, refuse or [])
        peer.server = await serve(peer.handler, "127.0.0.1", 0, process_request=peer.process_request)
        started.append(peer)
        return peer

    yield start
    for peer in started:
        assert peer.server is not None
        peer.server.close()
        await peer.server.wait_closed()


def client_for(peer: Peer, **options: Any) -> parley.Client:
    return parley.Client(url=peer.url, secret="peer-secret-0123456789", **options)


async def test_a_repeated_invoke_id_is_answered_twice_from_one_run(peers: Callable[..., Awaitable[Peer]]) -> None:
    release = asyncio.Event()
    runs: list[str] = []
    results: list[dict[str, Any]] = []

    async def script(ws: ServerConnection, peer: Peer) -> None:
        invoke = {"type": "invoke", "id": "conv_web_c1:m1:0:call_1", "name": "slow_write", "args": {"n": 1}, "context": CONTEXT}
        await ws.send(json.dumps(invoke))
        await ws.send(json.dumps(invoke))  # a retry while the first run is still in flight
        release.set()
        results.append(await peer.recv(ws))
        results.append(await peer.recv(ws))
        await ws.wait_closed()

    peer = await peers(script)
    client = client_for(peer)

    @client.tool(mode="write")
    async def slow_write(n: int, ctx: parley.Context) -> dict[str, int]:
        """A write that takes a moment."""
        runs.append(ctx.invocation_id)
        await release.wait()
        return {"n": n}

    await client.start()
    try:
        await _until(lambda: len(results) == 2)
    finally:
        await client.close()
    assert runs == ["conv_web_c1:m1:0:call_1"]
    assert results == [{"type": "result", "id": "conv_web_c1:m1:0:call_1", "ok": True, "data": {"n": 1}}] * 2


async def test_unknown_functions_unreadable_frames_results_that_are_not_json_and_sends_with_no_provider(
    peers: Callable[..., Awaitable[Peer]],
) -> None:
    answers: dict[str, dict[str, Any]] = {}

    async def script(ws: ServerConnection, peer: Peer) -> None:
        await ws.send(json.dumps({"type": "invoke", "id": "a", "name": "nobody", "args": {}, "context": CONTEXT}))
        answers["unknown"] = await peer.recv(ws)
        await ws.send(json.dumps({"type": "invoke", "id": "b"}))
        answers["bad"] = await peer.recv(ws)
        await ws.send(json.dumps({"type": "invoke", "id": "c", "name": "opaque", "args": {}, "context": CONTEXT}))
        answers["opaque"] = await peer.recv(ws)
        await ws.send(json.dumps({"type": "send", "id": "out:1", "channel": "whatsapp", "to": "+1555", "content": "hi"}))
        answers["send"] = await peer.recv(ws)
        await ws.send(json.dumps({"type": "invoke", "id": "d", "name": "none_back", "args": None, "context": CONTEXT}))
        answers["none"] = await peer.recv(ws)
        await ws.wait_closed()

    peer = await peers(script)
    client = client_for(peer)

    @client.tool
    def opaque() -> object:
        """Returns something that is not JSON."""
        return object()

    @client.tool
    def none_back() -> None:
        """Returns nothing."""

    await client.start()
    try:
        await _until(lambda: len(answers) == 5)
    finally:
        await client.close()
    assert answers["unknown"]["error"] == {"code": "unknown_function", "message": '"nobody" is not exposed by this SDK'}
    assert answers["bad"]["type"] == "error" and answers["bad"]["code"] == "bad_frame"
    assert "name: Field required" in answers["bad"]["message"]
    assert answers["opaque"]["ok"] is False and answers["opaque"]["error"]["code"] == "unserializable_result"
    assert answers["send"] == {"type": "sent", "id": "out:1", "ok": False, "error": "This SDK has no on_send handler"}
    assert answers["none"] == {"type": "result", "id": "d", "ok": True, "data": None}


async def test_refused_connections_are_retried_with_the_backoff_and_a_401_after_a_registration_is_too(
    peers: Callable[..., Awaitable[Peer]],
) -> None:
    async def script(ws: ServerConnection, peer: Peer) -> None:
        if len(peer.attempts) == 6:
            peer.refuse.extend([401, 401])  # the secret "rotated" for a while: the registered client keeps trying
            await ws.close()
            return
        await ws.wait_closed()

    peer = await peers(script, refuse=[503, 503, 503, 503, 503])
    client = client_for(peer, backoff=(0.05, 0.4))
    await client.start(timeout=60)
    first = peer.attempts[:6]
    gaps = [b - a for a, b in zip(first, first[1:])]
    # Each wait is at least half its step (0.05 s doubling, capped at 0.4 s): never a tight loop.
    assert all(gap >= floor for gap, floor in zip(gaps, [0.025, 0.05, 0.1, 0.2, 0.2])), gaps
    # Five waits of Parley's schedule take at most 1.15 s; websockets' own (3 s and more from the second) or any
    # constant wait of seconds takes well over 10 s.
    assert first[-1] - first[0] < 10, gaps
    await _until(lambda: client.registrations == 2)
    assert len(peer.attempts) == 9
    await client.close()


async def _until(condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)
