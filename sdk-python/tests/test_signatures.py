"""Webhook signatures and identity tokens: the same bytes as the Node SDK (fixtures it made), a third-party JWT
library accepts the tokens, and each kind of tampering is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jwt
import pytest

import parley

DIR = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "protocol" / "signatures"
WEBHOOK = json.loads((DIR / "webhook-signature.json").read_text())
OFFLINE = json.loads((DIR / "webhook-handoff-offline.json").read_text())
IDENTITY = json.loads((DIR / "identity-tokens.json").read_text())["cases"]


def fields_of(case: dict[str, Any]) -> parley.IdentityFields:
    f = case["fields"]
    out: parley.IdentityFields = {"external_id": f["externalId"]}
    for key in ("email", "name", "phone"):
        if key in f:
            out[key] = f[key]
    return out


def test_sign_webhook_reproduces_the_node_sdks_header_and_verify_accepts_it() -> None:
    w = WEBHOOK
    assert parley.sign_webhook(w["secret"], w["body"], w["t"]) == w["header"]
    event = parley.verify_webhook(w["body"].encode(), w["header"], w["secret"], now=w["t"])
    assert (event.id, event.type, event.data["note"]) == ("evt_1", "handoff.requested", "Zoë")


def test_verify_webhook_accepts_the_opt_in_handoff_offline_event_the_node_sdk_signed() -> None:
    w = OFFLINE
    assert parley.sign_webhook(w["secret"], w["body"], w["t"]) == w["header"]
    event = parley.verify_webhook(w["body"].encode(), w["header"], w["secret"], now=w["t"])
    assert event.model_dump() == json.loads(w["body"])
    assert (event.type, event.data["since"], event.data["waitedMinutes"]) == ("handoff.offline", 1795770000000, 10)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"header": None}, "No parley-signature header"),
        ({"header": "t=abc,v1=00"}, "Malformed"),
        ({"secret": "another-secret-0123456789abcdef!"}, "does not match"),
        ({"body": WEBHOOK["body"].replace("evt_1", "evt_2")}, "does not match"),
        ({"now": WEBHOOK["t"] + 301}, "outside the tolerance"),
    ],
)
def test_verify_webhook_refuses(change: dict[str, Any], reason: str) -> None:
    w = {"body": WEBHOOK["body"], "header": WEBHOOK["header"], "secret": WEBHOOK["secret"], "now": WEBHOOK["t"]}
    w.update(change)
    with pytest.raises(parley.WebhookVerificationError, match=reason):
        parley.verify_webhook(w["body"], w["header"], w["secret"], now=w["now"])


def test_verify_webhook_accepts_any_matching_v1_among_several_and_refuses_a_body_that_is_no_event() -> None:
    w = WEBHOOK
    header = f"{w['header']},v1={'0' * 64}"
    assert parley.verify_webhook(w["body"], header, w["secret"], now=w["t"]).id == "evt_1"
    body = json.dumps({"hello": "world"})
    with pytest.raises(parley.WebhookVerificationError, match="not a Parley event"):
        parley.verify_webhook(body, parley.sign_webhook(w["secret"], body, 100), w["secret"], now=100)


@pytest.mark.parametrize("case", IDENTITY, ids=[c["fields"]["externalId"] for c in IDENTITY])
def test_sign_identity_makes_the_node_sdks_token_byte_for_byte(case: dict[str, Any]) -> None:
    token = parley.sign_identity(fields_of(case), secret=case["secret"], expires_in=case["expiresIn"], now=case["nowSeconds"])
    assert token == case["token"]


def test_identity_tokens_are_hs256_jwts_a_third_party_library_accepts() -> None:
    token = parley.sign_identity(
        {"external_id": "user-42", "email": "ada@example.com"}, secret="identity-secret-0123456789abcdef", expires_in=600
    )
    claims = jwt.decode(token, "identity-secret-0123456789abcdef", algorithms=["HS256"], options={"require": ["sub", "exp", "iat"]})
    assert claims["sub"] == "user-42" and claims["email"] == "ada@example.com"
    assert claims["exp"] - claims["iat"] == 600
    assert jwt.get_unverified_header(token) == {"alg": "HS256", "typ": "JWT"}
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, "another-secret-0123456789abcdef!", algorithms=["HS256"])


def test_an_expired_identity_token_is_expired_and_bad_input_is_refused() -> None:
    token = parley.sign_identity({"external_id": "u"}, secret="s" * 32, expires_in=60, now=1_000_000)
    with pytest.raises(jwt.ExpiredSignatureError):
        jwt.decode(token, "s" * 32, algorithms=["HS256"])
    with pytest.raises(ValueError, match="external_id"):
        parley.sign_identity({"external_id": ""}, secret="s" * 32)
    with pytest.raises(ValueError, match="secret"):
        parley.sign_identity({"external_id": "u"}, secret="")
    with pytest.raises(ValueError, match="expires_in"):
        parley.sign_identity({"external_id": "u"}, secret="s" * 32, expires_in=0)
