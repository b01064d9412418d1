"""The wire protocol between Parley and a backend SDK (``GET /sdk``): one pydantic model per frame.

A mirror of the Node SDK's protocol module (its zod schemas, in the sdk folder). Both SDKs' tests parse the
same JSON frames in ``test/fixtures/protocol/`` so the two definitions cannot drift apart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

FunctionMode = Literal["read", "write", "destructive"]
Channel = Literal["web", "whatsapp"]

# Letters, digits, _ and -, not starting with a digit; at most 64 characters.
Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")]
# `<conversationId>:<messageId>:<step>:<callId>`: long with real WhatsApp message ids.
Id = Annotated[str, Field(min_length=1, max_length=512)]
#: A language tag (``es``, ``es-MX``): a customer's locale.
LocaleTag = Annotated[str, Field(min_length=2, max_length=35, pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")]
#: What the customer reads once a confirmed action ran.
Receipt = Annotated[str, Field(min_length=1, max_length=500)]

MAX_FRAME_BYTES = 1024 * 1024


class _Frame(BaseModel):
    # Unknown keys are dropped, as zod's objects do: a newer server's extra fields never break an older SDK.
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)


class FunctionDeclaration(_Frame):
    name: Name
    description: Annotated[str, Field(max_length=2000)] = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    mode: FunctionMode = "read"
    #: Offered to visitors (customers who have not signed in) too; never applies to write and destructive tools.
    visitors: bool = False
    #: The confirmation card's words per locale: templates whose ``{argName}`` placeholders take the arguments.
    summary: Annotated[dict[LocaleTag, Annotated[str, Field(min_length=1, max_length=300)]], Field(max_length=32)] | None = None
    #: The backend words the summary itself: Parley asks with a ``summarize`` frame before a confirmation.
    summarizes: bool = False


class InvokeContext(_Frame):
    customerId: str
    externalId: str | None = None
    channel: Channel
    conversationId: str
    #: The customer proved who they are (identity token, session token, WhatsApp number); false for a visitor.
    verified: bool = False
    #: The customer's locale (the widget's browser language, or the WhatsApp default); None when unknown.
    locale: LocaleTag | None = None


class ToolError(_Frame):
    message: Annotated[str, Field(max_length=4000)]
    code: Annotated[str, Field(max_length=128)] | None = None


class SdkInfo(_Frame):
    name: Annotated[str, Field(max_length=64)]
    version: Annotated[str, Field(max_length=32)]


# SDK → server


class RegisterFrame(_Frame):
    type: Literal["register"]
    functions: Annotated[list[FunctionDeclaration], Field(max_length=256)]
    sdk: SdkInfo = SdkInfo(name="unknown", version="0")
    sendProvider: bool = False


class ResultOkFrame(_Frame):
    type: Literal["result"]
    id: Id
    ok: Literal[True]
    data: Any = None
    receipt: Receipt | None = None


class ResultErrorFrame(_Frame):
    type: Literal["result"]
    id: Id
    ok: Literal[False]
    error: ToolError
    receipt: Receipt | None = None


class SentFrame(_Frame):
    type: Literal["sent"]
    id: Id
    ok: bool
    messageId: Annotated[str, Field(max_length=256)] | None = None
    error: Annotated[str, Field(max_length=4000)] | None = None


class IngestFrame(_Frame):
    type: Literal["ingest"]
    id: Id
    channel: Channel
    # `from` is a Python keyword: the field is `from_` here and `from` on the wire.
    from_: Annotated[str, Field(alias="from", min_length=1, max_length=64)]
    text: Annotated[str, Field(min_length=1, max_length=8000)]
    messageId: Annotated[str, Field(max_length=256)] | None = None

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, populate_by_name=True)


# server → SDK


class SummaryFrame(_Frame):
    """The answer to ``summarize``: the summary in the asked locale (None: Parley falls back)."""

    type: Literal["summary"]
    id: Id
    text: Annotated[str, Field(min_length=1, max_length=300)] | None = None


class RegisteredFrame(_Frame):
    type: Literal["registered"]
    functions: int


class InvokeFrame(_Frame):
    type: Literal["invoke"]
    id: Id
    name: Name
    args: Any = None
    context: InvokeContext


class SendFrame(_Frame):
    type: Literal["send"]
    id: Id
    channel: Channel
    to: str
    content: str


class SummarizeFrame(_Frame):
    """Parley asks a ``summarizes`` tool for its confirmation summary of these arguments, in this locale."""

    type: Literal["summarize"]
    id: Id
    name: Name
    args: Any = None
    locale: LocaleTag


class AckFrame(_Frame):
    type: Literal["ack"]
    id: Id
    ok: bool
    error: str | None = None


class HandoffNotice(_Frame):
    """A conversation was handed to a person (``requested``, with ``source`` and ``reason``), no one of the team wrote
    within ``handoff.offline_after_minutes`` and the customer was told so (``offline``, once per handoff, with
    ``since``), or it was given back (``released``, with ``by``; ``resolved`` when an agent resolved it)."""

    conversationId: str
    customerId: str
    externalId: str | None = None
    channel: Channel
    phase: Literal["requested", "offline", "released"]
    reason: str | None = None
    source: Literal["model", "api"] | None = None
    by: Literal["agent", "idle"] | None = None
    since: int | float | None = None  # offline only: when the handoff started (ms since the epoch)
    resolved: Literal[True] | None = None  # released only: an agent resolved the conversation (the inbox's resolve)
    at: int | float  # ms since the epoch (a JSON number: kept as sent)


class CustomerMessageNotice(_Frame):
    """A customer wrote in a conversation a person has (the model does not answer it)."""

    conversationId: str
    customerId: str
    externalId: str | None = None
    channel: Channel
    messageId: str
    text: str
    at: int | float  # ms since the epoch (a JSON number: kept as sent)


class HandoffFrame(HandoffNotice):
    type: Literal["handoff"]


class CustomerMessageFrame(CustomerMessageNotice):
    type: Literal["customer_message"]


# both


class ErrorFrame(_Frame):
    type: Literal["error"]
    code: str
    message: str


ResultFrame = Annotated[Union[ResultOkFrame, ResultErrorFrame], Field(discriminator="ok")]
ClientFrame = Union[RegisterFrame, ResultOkFrame, ResultErrorFrame, SentFrame, IngestFrame, SummaryFrame, ErrorFrame]
ServerFrame = Annotated[
    Union[RegisteredFrame, InvokeFrame, SendFrame, AckFrame, HandoffFrame, CustomerMessageFrame, SummarizeFrame, ErrorFrame],
    Field(discriminator="type"),
]

SERVER_FRAME: TypeAdapter[
    RegisteredFrame | InvokeFrame | SendFrame | AckFrame | HandoffFrame | CustomerMessageFrame | SummarizeFrame | ErrorFrame
] = TypeAdapter(ServerFrame)
RESULT_FRAME: TypeAdapter[ResultOkFrame | ResultErrorFrame] = TypeAdapter(ResultFrame)

_CLIENT_BY_TYPE: dict[str, type[_Frame]] = {
    "register": RegisterFrame,
    "sent": SentFrame,
    "ingest": IngestFrame,
    "summary": SummaryFrame,
    "error": ErrorFrame,
}


def parse_server_frame(
    raw: str | bytes,
) -> RegisteredFrame | InvokeFrame | SendFrame | AckFrame | HandoffFrame | CustomerMessageFrame | SummarizeFrame | ErrorFrame:
    """Parses one frame Parley sent. Raises ``pydantic.ValidationError`` for anything else."""
    return SERVER_FRAME.validate_json(raw)


def parse_client_frame(value: Any) -> ClientFrame:
    """Parses one frame an SDK sends (a dict). Raises ``pydantic.ValidationError`` or ``ValueError``."""
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "result":
        return RESULT_FRAME.validate_python(value)
    model = _CLIENT_BY_TYPE.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ValueError(f"not a client frame type: {kind!r}")
    frame = model.model_validate(value)
    assert isinstance(frame, (RegisterFrame, SentFrame, IngestFrame, SummaryFrame, ErrorFrame))
    return frame


def dump(frame: BaseModel) -> dict[str, Any]:
    """The frame as sent on the wire: aliases (``from``), no unset optional fields (zod's optional is not nullable)."""
    out = frame.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(frame, ResultOkFrame):
        # A result's data is the handler's value as is: its nulls are data, not unset fields.
        out["data"] = frame.model_dump(mode="json", include={"data"})["data"]
    return out
