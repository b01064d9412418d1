"""A typed function as a tool: the JSON Schema from its hints and docstring, pydantic validation, sync and async
handlers, the context, results made JSON, and the backoff schedule."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

import parley
from parley.backoff import backoff_delay, backoff_delays
from parley.client import sdk_url
from parley.tools import describe_validation_error, make_tool, parse_docstring

CTX = parley.Context(invocation_id="conv:m:0:call", customer_id="c1", channel="web", conversation_id="conv")


class Address(BaseModel):
    street: str
    city: str


def ship(
    order_id: str,
    address: Address,
    speed: Literal["standard", "express"] = "standard",
    insured: bool = False,
    notes: list[str] | None = None,
    ctx: parley.Context | None = None,
) -> dict[str, object]:
    """Ship an order to an address.

    Longer text that is not part of the summary? It is: the summary is everything before the sections.

    Args:
        order_id: The order number.
        address: Where to.
        speed: How fast,
            standard unless the customer paid.

    Returns:
        The shipment.
    """
    return {"orderId": order_id, "city": address.city, "speed": speed, "by": ctx.customer_id if ctx else None}


def test_the_schema_comes_from_the_hints_and_the_docstring() -> None:
    tool = make_tool(ship, mode="write")
    d = tool.declaration
    assert (d.name, d.mode, d.visitors) == ("ship", "write", False)
    assert d.description.startswith("Ship an order to an address. Longer text")
    p = d.parameters
    assert p["type"] == "object" and p["required"] == ["order_id", "address"]
    assert set(p["properties"]) == {"order_id", "address", "speed", "insured", "notes"}  # not ctx
    assert p["properties"]["order_id"] == {"type": "string", "description": "The order number."}
    assert p["properties"]["speed"]["enum"] == ["standard", "express"]
    assert p["properties"]["speed"]["description"] == "How fast, standard unless the customer paid."
    assert p["properties"]["insured"] == {"type": "boolean", "default": False}
    assert p["$defs"]["Address"]["required"] == ["street", "city"]
    assert "title" not in p and "title" not in p["properties"]["order_id"]
    assert tool.context_parameter == "ctx"


def test_arguments_are_validated_and_converted_before_the_handler_runs() -> None:
    tool = make_tool(ship)
    out = asyncio.run(tool.run({"order_id": "1001", "address": {"street": "1 Main St", "city": "Lyon"}}, CTX))
    assert out == {"orderId": "1001", "city": "Lyon", "speed": "standard", "by": "c1"}
    with pytest.raises(ValidationError) as bad:
        asyncio.run(tool.run({"order_id": 5, "address": {"street": "x"}, "speed": "warp"}, CTX))
    message = describe_validation_error(bad.value)
    assert "order_id: Input should be a valid string" in message
    assert "address.city: Field required" in message
    assert "speed: Input should be 'standard' or 'express'" in message


def test_constraints_from_annotated_fields_are_in_the_schema_and_enforced() -> None:
    def book(seats: Annotated[int, Field(ge=1, le=10, description="How many seats")]) -> int:
        """Book seats."""
        return seats

    tool = make_tool(book)
    assert tool.declaration.parameters["properties"]["seats"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "description": "How many seats",
    }
    assert asyncio.run(tool.run({"seats": 3}, CTX)) == 3
    with pytest.raises(ValidationError, match="less than or equal to 10"):
        asyncio.run(tool.run({"seats": 11}, CTX))


def test_async_handlers_are_awaited_and_sync_ones_run_off_the_event_loop() -> None:
    seen: list[str] = []

    async def a(x: int) -> int:
        seen.append("async")
        return x + 1

    def s(x: int) -> int:
        import threading

        seen.append(threading.current_thread().name)
        return x * 2

    assert make_tool(a).is_async and not make_tool(s).is_async
    assert asyncio.run(make_tool(a).run({"x": 1}, CTX)) == 2
    assert asyncio.run(make_tool(s).run({"x": 4}, CTX)) == 8
    assert seen[0] == "async" and seen[1] != "MainThread"


def test_results_become_json_and_a_value_that_is_not_json_is_a_type_error() -> None:
    @dataclasses.dataclass
    class Shipment:
        at: datetime.date
        address: Address

    def shipment() -> Shipment:
        """Today's shipment."""
        return Shipment(datetime.date(2026, 11, 27), Address(street="1 Main St", city="Lyon"))

    out = asyncio.run(make_tool(shipment).run(None, CTX))
    assert out == {"at": "2026-11-27", "address": {"street": "1 Main St", "city": "Lyon"}}

    def opaque() -> object:
        """Something odd."""
        return object()

    with pytest.raises(TypeError, match="not JSON"):
        asyncio.run(make_tool(opaque).run({}, CTX))


def test_a_context_parameter_is_found_by_name_or_by_type_and_is_never_an_argument() -> None:
    def by_type(context: parley.Context) -> str:
        """x"""
        return context.invocation_id

    tool = make_tool(by_type)
    assert tool.context_parameter == "context" and tool.declaration.parameters["properties"] == {}
    assert asyncio.run(tool.run({"context": "forged"}, CTX)) == "conv:m:0:call"


def test_bad_tool_definitions_are_refused_when_declared() -> None:
    client = parley.Client(url="http://127.0.0.1:9", secret="s" * 32)

    def spread(*args: int) -> None:
        """x"""

    with pytest.raises(TypeError, match="named parameters"):
        client.tool(spread)

    def fine() -> None:
        """x"""

    client.tool(fine)
    with pytest.raises(ValueError, match="already exposed"):
        client.tool(fine)
    with pytest.raises(ValidationError):
        client.tool(name="1 bad name")(fine)


def test_sphinx_docstrings_are_read_too() -> None:
    summary, params = parse_docstring(
        """Refund a payment.

        :param payment_id: The payment,
            from the receipt.
        :param int amount: In cents.
        :returns: the refund.
        """
    )
    assert summary == "Refund a payment."
    assert params == {"payment_id": "The payment, from the receipt.", "amount": "In cents."}


def test_backoff_doubles_from_half_a_second_to_thirty_with_equal_jitter() -> None:
    low = [backoff_delay(a, random=lambda: 0.0) for a in range(9)]
    high = [backoff_delay(a, random=lambda: 1.0) for a in range(9)]
    assert high == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]
    assert low == [h / 2 for h in high]
    series = backoff_delays(random=lambda: 1.0)
    assert [next(series) for _ in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]


def test_sdk_url_accepts_the_base_url_or_the_socket_url() -> None:
    assert sdk_url("http://127.0.0.1:3000") == "ws://127.0.0.1:3000/sdk"
    assert sdk_url("https://parley.example.com/") == "wss://parley.example.com/sdk"
    assert sdk_url("ws://h:1/sdk") == "ws://h:1/sdk"
    with pytest.raises(ValueError, match="Unsupported URL scheme"):
        sdk_url("ftp://h")
