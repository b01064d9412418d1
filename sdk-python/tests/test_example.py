"""examples/fastapi_backend.py against a real Parley: its lifespan connects the client, a customer's turns run its
read tool, its write tool after an approval, and its ToolError reaches the customer."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from parley_server import SECRET, ParleyServer, until
from widget import Widget

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fastapi_backend.py"


def load_example(monkeypatch: pytest.MonkeyPatch, url: str) -> ModuleType:
    monkeypatch.setenv("PARLEY_URL", url)
    monkeypatch.setenv("SERVICE_SDK_SECRET", SECRET)
    spec = importlib.util.spec_from_file_location("fastapi_backend_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


async def test_the_fastapi_example_serves_a_customer(
    server: ParleyServer, monkeypatch: pytest.MonkeyPatch, widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    example = load_example(monkeypatch, server.url)
    async with example.lifespan(example.app):
        assert {"lookup_order", "cancel_order"} <= set(server.functions())
        widget = await Widget.open(server.url, unique("py-example-"))
        widgets.append(widget)

        await widget.say("what is the status of order 1001?", "m1")
        assert "shipped" in await widget.reply()

        await widget.say("cancel order 1002", "m2")
        confirm = await widget.next(lambda f: f["type"] == "confirm")
        assert example.ORDERS["1002"].status == "processing"
        await widget.send({"type": "confirm", "id": confirm["id"], "approve": True})
        assert "cancelled" in await widget.reply()
        assert example.ORDERS["1002"].status == "cancelled"

        await widget.say("cancel order 1001", "m3")
        confirm = await widget.next(lambda f: f["type"] == "confirm")
        await widget.send({"type": "confirm", "id": confirm["id"], "approve": True})
        assert "has shipped: it can be returned, not cancelled" in await widget.reply()
    assert not example.client.connected
    await until(lambda: "lookup_order" not in server.functions(), what="the closed client's tools to leave Parley")
