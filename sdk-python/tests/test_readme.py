"""The README's minimal backend, as written, against a real Parley: its two tools register, a customer's question
runs the read one, and the write one waits for the customer's approval. Every python block in the README parses."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import parley
from parley_server import SECRET, ParleyServer, until
from widget import Widget

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
RUN_LINE = "asyncio.run(client.listen())"


def minimal_backend() -> str:
    section = README[README.index("## A minimal backend") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "no python block under 'A minimal backend'"
    return block.group(1)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_python_block_parses(block: str) -> None:
    compile(block, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)  # snippets may `await` at top level


async def test_the_minimal_backend_of_the_readme_serves_a_customer(
    server: ParleyServer, monkeypatch: pytest.MonkeyPatch, widgets: list[Widget], unique: Callable[[str], str]
) -> None:
    code = minimal_backend()
    assert RUN_LINE in code and 'url="http://127.0.0.1:3000"' in code
    # Parley's URL is this test's; listen() is started below instead of blocking the module.
    code = code.replace('url="http://127.0.0.1:3000"', f'url="{server.url}"').replace(RUN_LINE, "")
    monkeypatch.setenv("SERVICE_SDK_SECRET", SECRET)
    cancelled: list[tuple[str, str]] = []

    class Payments:
        async def cancel(self, order_id: str, idempotency_key: str) -> None:
            cancelled.append((order_id, idempotency_key))

    scope: dict[str, Any] = {
        "__name__": "readme_backend",
        "ORDERS": {"1001": SimpleNamespace(status="shipped", eta="2026-11-25"), "1002": SimpleNamespace(status="new", eta="")},
        "payments": Payments(),
    }
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 (the README's own code)
    client = scope["client"]
    assert isinstance(client, parley.Client) and set(client.tools) == {"lookup_order", "cancel_order"}

    await client.start()
    try:
        assert {"lookup_order", "cancel_order"} <= set(server.functions())
        widget = await Widget.open(server.url, unique("py-readme-"))
        widgets.append(widget)
        await widget.say("what is the status of order 1001?", "m1")
        assert "2026-11-25" in await widget.reply()

        await widget.say("cancel order 1002", "m2")
        confirm = await widget.next(lambda f: f["type"] == "confirm")
        assert cancelled == []
        await widget.send({"type": "confirm", "id": confirm["id"], "approve": True})
        assert "cancelled" in await widget.reply()
        assert len(cancelled) == 1 and cancelled[0][0] == "1002" and cancelled[0][1].startswith("conv_web_")
    finally:
        await client.close()
    await until(lambda: "cancel_order" not in server.functions(), what="the README backend's tools to leave Parley")
