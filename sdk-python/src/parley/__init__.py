"""parley-sdk: connect a Python backend to Parley. See README.md."""

from ._version import __version__
from .backoff import backoff_delay
from .client import Client, OutboundMessage, ParleyConnectionError, sdk_url
from .conversations import (
    AgentReplyResponse,
    ConversationList,
    ConversationStateResponse,
    Conversations,
    ConversationView,
    ParleyApiError,
)
from .identity import IdentityFields, sign_identity
from .media import DownloadedMedia, ParleyMediaError
from .protocol import AckFrame, CustomerMessageNotice, HandoffNotice
from .tools import Context, Localized, SummaryFunction, ToolError, WithReceipt, with_receipt
from .webhook import (
    SIGNATURE_HEADER,
    WebhookEvent,
    WebhookVerificationError,
    sign_webhook,
    verify_webhook,
)

__all__ = [
    "SIGNATURE_HEADER",
    "AckFrame",
    "AgentReplyResponse",
    "Client",
    "Context",
    "ConversationList",
    "ConversationStateResponse",
    "ConversationView",
    "Conversations",
    "CustomerMessageNotice",
    "DownloadedMedia",
    "HandoffNotice",
    "IdentityFields",
    "OutboundMessage",
    "ParleyApiError",
    "ParleyConnectionError",
    "ParleyMediaError",
    "Localized",
    "SummaryFunction",
    "ToolError",
    "WithReceipt",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "backoff_delay",
    "sdk_url",
    "sign_identity",
    "sign_webhook",
    "verify_webhook",
    "with_receipt",
]
