"""The agent API from your backend (human handoff): reply as a person, give a conversation back to the assistant, hand
one over, read one, list the agent inbox. HTTP calls to Parley (stdlib ``urllib`` in a worker thread) with the
client's ``url`` and ``secret``; the answers are the same shapes as the Node SDK's ``sdk/src/agent-api.ts``."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

Channel = Literal["web", "whatsapp"]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AgentAuthor(_Answer):
    name: str


class AgentReplyResponse(_Answer):
    id: str
    conversationId: str
    at: float


class ConversationStateResponse(_Answer):
    conversationId: str
    state: str


class HandoffInfo(_Answer):
    since: float
    source: Literal["model", "api"]
    reason: str | None = None
    agent: AgentAuthor | None = None


class ConversationMessage(_Answer):
    id: str
    #: Its place in the conversation: pass the first one's as ``before`` to read older messages.
    seq: int
    role: Literal["user", "assistant", "agent", "confirmation", "handoff"]
    text: str
    at: float
    author: AgentAuthor | None = None
    proactive: bool | None = None
    data: dict[str, Any] | None = None


class ConversationCustomer(_Answer):
    customerId: str
    externalId: str
    email: str | None = None
    phone: str | None = None


class ConversationView(_Answer):
    conversationId: str
    channel: Channel
    state: str
    handoff: HandoffInfo | None = None
    customer: ConversationCustomer
    messages: list[ConversationMessage]
    #: Older messages exist: pass this as ``before``.
    nextBefore: int | None


class ConversationListItem(_Answer):
    conversationId: str
    channel: Channel
    state: str
    customerId: str
    externalId: str | None = None
    handoff: HandoffInfo | None = None
    lastMessageAt: float | None = None


class ConversationList(_Answer):
    items: list[ConversationListItem]
    nextBefore: str | None


class ParleyApiError(Exception):
    """Parley refused (``status``, and its ``code``: ``not_handed_off``, ``outside_window``,
    ``conversation_not_found``, ``validation_failed``, …) or was not reached (``status`` 0, ``network_error``)."""

    def __init__(self, message: str, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def http_base_url(url: str) -> str:
    """``ws://h:p/sdk`` or ``http://h:p`` → ``http://h:p`` (the base of Parley's HTTP routes)."""
    parts = urllib.parse.urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if path.endswith("/sdk"):
        path = path[: -len("/sdk")]
    return urllib.parse.urlunsplit((scheme, parts.netloc, path.rstrip("/"), "", ""))


A = TypeVar("A", bound=BaseModel)


class Conversations:
    def __init__(self, url: str, secret: str, timeout: float = 30.0) -> None:
        self._base = http_base_url(url)
        self._secret = secret
        self._timeout = timeout

    async def reply(self, conversation_id: str, text: str, author: str) -> AgentReplyResponse:
        """Sends ``text`` to the customer as a person named ``author`` (only while a person has the conversation)."""
        body = {"text": text, "author": {"name": author}}
        return await self._call(AgentReplyResponse, "POST", f"/conversations/{_id(conversation_id)}/messages", body)

    async def release(self, conversation_id: str) -> ConversationStateResponse:
        """Gives the conversation back to the assistant."""
        return await self._call(ConversationStateResponse, "POST", f"/conversations/{_id(conversation_id)}/release", {})

    async def handoff(self, conversation_id: str, reason: str | None = None) -> ConversationStateResponse:
        """Hands the conversation to a person (as the model's ``handoff`` tool does)."""
        body = {} if reason is None else {"reason": reason}
        return await self._call(ConversationStateResponse, "POST", f"/conversations/{_id(conversation_id)}/handoff", body)

    async def get(self, conversation_id: str, *, before: int | None = None, limit: int | None = None) -> ConversationView:
        """The conversation, its customer and its last ``limit`` (50) messages; ``before`` pages back."""
        path = f"/conversations/{_id(conversation_id)}{_query(before=before, limit=limit)}"
        return await self._call(ConversationView, "GET", path)

    async def with_human(self, *, before: str | None = None, limit: int | None = None) -> ConversationList:
        """The agent inbox: conversations a person has, most recently handed over first."""
        return await self._call(ConversationList, "GET", f"/conversations{_query(state='withHuman', before=before, limit=limit)}")

    async def _call(self, model: type[A], method: str, path: str, body: dict[str, Any] | None = None) -> A:
        status, payload = await asyncio.to_thread(self._request, method, path, body)
        if status >= 400:
            error = payload.get("error") if isinstance(payload, dict) else None
            error = error if isinstance(error, dict) else {}
            message, code = error.get("message"), error.get("code")
            raise ParleyApiError(
                message if isinstance(message, str) else f"HTTP {status}",
                status,
                code if isinstance(code, str) else "http_error",
            )
        return model.model_validate(payload)

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        headers = {"authorization": f"Bearer {self._secret}", "accept": "application/json"}
        data = None
        if body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(f"{self._base}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310 (http(s) only)
                return response.status, _json(response.read())
        except urllib.error.HTTPError as err:
            return err.code, _json(err.read())
        except (urllib.error.URLError, OSError) as err:
            raise ParleyApiError(f"Could not reach Parley: {err}", 0, "network_error") from None


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}


def _id(conversation_id: str) -> str:
    return urllib.parse.quote(conversation_id, safe="")


def _query(**values: str | int | None) -> str:
    present = {k: str(v) for k, v in values.items() if v is not None}
    return f"?{urllib.parse.urlencode(present)}" if present else ""
