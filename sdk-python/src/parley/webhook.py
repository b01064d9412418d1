"""Signatures of Parley's outbound webhooks, as ``sdk/src/webhook-signature.ts``:
``parley-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>``."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

SIGNATURE_HEADER = "parley-signature"

#: Every event type, as ``WEBHOOK_EVENT_TYPES`` in ``sdk/src/agent-api.ts``. ``handoff.offline`` (no agent wrote within
#: ``handoff.offline_after_minutes``: ``since``, ``waitedMinutes``) is opt-in: Parley sends it only to an endpoint whose
#: ``events`` list names it.
WebhookEventType = Literal[
    "handoff.requested",
    "handoff.offline",
    "handoff.released",
    "message.customer",
    "message.assistant",
    "message.agent",
    "confirmation.resolved",
    "proactive.accepted",
    "proactive.blocked",
    "whatsapp.status",
    "daemon.verdict",
    "conversation.outcome",
]


class WebhookEvent(BaseModel):
    """The body Parley POSTs to a webhook: ``id`` is the same on every retry of one event (drop duplicates by it)."""

    id: str
    type: WebhookEventType
    #: ms since the epoch, when the fact happened.
    createdAt: float
    data: dict[str, Any]


class WebhookVerificationError(Exception):
    """The header is missing or malformed, no signature matches, the time is off, or the body is not an event."""


def _hmac(secret: str, t: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def _bytes(body: str | bytes) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def sign_webhook(secret: str, body: str | bytes, t: int) -> str:
    """The header value for ``body`` sent at ``t`` (unix seconds): for tests."""
    return f"t={t},v1={_hmac(secret, t, _bytes(body))}"


_T = re.compile(r"^\d+$")
_V1 = re.compile(r"^[0-9a-fA-F]{64}$")


def verify_webhook(
    raw_body: str | bytes,
    header: str | None,
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: float | None = None,
) -> WebhookEvent:
    """Checks a webhook's ``parley-signature`` header against the raw body (the exact bytes received: parse them
    only after) in constant time, and returns the event. ``now`` is unix seconds (tests).

    Raises ``WebhookVerificationError``."""
    if not header:
        raise WebhookVerificationError(f"No {SIGNATURE_HEADER} header")
    t: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        key, _, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if key == "t" and _T.match(value):
            t = int(value)
        elif key == "v1" and _V1.match(value):
            signatures.append(value.lower())
    if t is None or not signatures:
        raise WebhookVerificationError(f"Malformed {SIGNATURE_HEADER} header")
    body = _bytes(raw_body)
    expected = _hmac(secret, t, body)
    match = False
    # Every candidate is compared (no early exit), each in constant time.
    for s in signatures:
        match = hmac.compare_digest(expected, s) or match
    if not match:
        raise WebhookVerificationError("Signature does not match")
    current = int(time.time() if now is None else now)
    if abs(current - t) > tolerance_seconds:
        raise WebhookVerificationError(f"Timestamp outside the tolerance ({tolerance_seconds} s)")
    try:
        parsed = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise WebhookVerificationError("Body is not JSON") from None
    try:
        return WebhookEvent.model_validate(parsed)
    except ValidationError:
        raise WebhookVerificationError("Body is not a Parley event") from None
