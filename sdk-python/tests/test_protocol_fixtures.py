"""The wire frames both SDKs must agree on (test/fixtures/protocol/*.json), read with the pydantic models; the Node
SDK's test/unit/sdk-protocol-fixtures.test.ts reads the same files with its zod schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from parley import protocol

DIR = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "protocol"
FILES = sorted(DIR.glob("*.json"))

SCHEMAS: dict[str, Any] = {
    "RegisterFrame": protocol.RegisterFrame,
    "ResultFrame": protocol.RESULT_FRAME,
    "SentFrame": protocol.SentFrame,
    "IngestFrame": protocol.IngestFrame,
    "ErrorFrame": protocol.ErrorFrame,
    "RegisteredFrame": protocol.RegisteredFrame,
    "InvokeFrame": protocol.InvokeFrame,
    "SendFrame": protocol.SendFrame,
    "AckFrame": protocol.AckFrame,
    "HandoffFrame": protocol.HandoffFrame,
    "CustomerMessageFrame": protocol.CustomerMessageFrame,
    "SummarizeFrame": protocol.SummarizeFrame,
    "SummaryFrame": protocol.SummaryFrame,
}


def parse(schema: Any, value: Any) -> dict[str, Any]:
    """Parses as the SDK reads a frame (from JSON text) and returns it as it would go on the wire."""
    raw = json.dumps(value)
    frame = schema.validate_json(raw) if isinstance(schema, TypeAdapter) else schema.model_validate_json(raw)
    assert isinstance(frame, BaseModel)
    return protocol.dump(frame)


def parse_union(direction: str, value: Any) -> None:
    if direction == "server":
        protocol.parse_server_frame(json.dumps(value))
    else:
        protocol.parse_client_frame(value)


def matches(actual: Any, expected: Any) -> bool:
    """Like vitest's toMatchObject: every key of ``expected`` is in ``actual`` with a matching value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and matches(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(map(matches, actual, expected))
    return bool(actual == expected and type(actual) is type(expected))


def test_the_fixtures_cover_every_frame_kind_of_both_directions() -> None:
    kinds = {v["input"]["type"] for f in FILES for v in json.loads(f.read_text())["valid"]}
    expected = {"register", "result", "sent", "ingest", "summary", "error"}
    expected |= {"registered", "invoke", "send", "ack", "handoff", "customer_message", "summarize"}
    assert kinds == expected


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_valid_frames_parse_and_invalid_ones_are_refused(path: Path) -> None:
    fixture = json.loads(path.read_text())
    schema = SCHEMAS[fixture["schema"]]
    assert fixture["valid"] and fixture["invalid"]
    for case in fixture["valid"]:
        out = parse(schema, case["input"])
        assert matches(out, case.get("parsed", case["input"])), (case, out)
        parse_union(fixture["direction"], case["input"])
    for bad in fixture["invalid"]:
        with pytest.raises((ValidationError, ValueError)):
            parse(schema, bad)
        with pytest.raises((ValidationError, ValueError)):
            parse_union(fixture["direction"], bad)
