"""Identity tokens for the widget: an HS256 JWT (RFC 7519) your backend signs with the secret it shares with Parley
(``identity.jwt_secret``, env ``SERVICE_IDENTITY_SECRET``), so a signed-in customer's widget needs no round trip to
Parley per page view. The same token as the Node SDK's ``signIdentity``: ``sub`` (your id of the customer), ``iat``,
``exp``, and ``email``/``name``/``phone`` when given."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import time
from typing import Any, TypedDict

from typing_extensions import NotRequired


class IdentityFields(TypedDict):
    #: Your own id of the customer (the token's ``sub``).
    external_id: str
    email: NotRequired[str]
    name: NotRequired[str]
    #: E.164, e.g. +15550001111.
    phone: NotRequired[str]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _segment(value: dict[str, Any]) -> str:
    return _b64(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def sign_identity(fields: IdentityFields, *, secret: str, expires_in: float = 3600, now: float | None = None) -> str:
    """Signs ``fields`` as an identity token: pass it to the widget as ``authToken``.

    ``expires_in``: seconds until it expires (Parley refuses more than ``identity.jwt_max_lifetime_hours``);
    ``now``: unix seconds to sign at (default: now)."""
    if not fields.get("external_id"):
        raise ValueError("sign_identity: external_id is required")
    if not secret:
        raise ValueError("sign_identity: secret is required")
    if not math.isfinite(expires_in) or expires_in <= 0:
        raise ValueError("sign_identity: expires_in must be a positive number of seconds")
    iat = math.floor(time.time() if now is None else now)
    claims: dict[str, Any] = {"sub": fields["external_id"], "iat": iat, "exp": iat + math.floor(expires_in)}
    for key in ("email", "name", "phone"):
        if key in fields:
            claims[key] = fields[key]
    signing_input = f"{_segment({'alg': 'HS256', 'typ': 'JWT'})}.{_segment(claims)}"
    signature = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"
