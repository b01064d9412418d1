"""The connection's rules: where the SDK dials (``sdk_url``), and which failures to connect are retried with backoff
and which end ``listen()`` (``retryable``, websockets' ``process_exception``)."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

from websockets.exceptions import InvalidStatus, InvalidURI

log = logging.getLogger("parley")


class ParleyConnectionError(Exception):
    """Parley refused the connection for good (a wrong secret on the first attempt: ``status`` 401)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def sdk_url(url: str) -> str:
    """``http://h:p`` → ``ws://h:p/sdk``; ``ws://h:p/sdk`` as is."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None:
        raise ValueError(f'Unsupported URL scheme "{parts.scheme}" (use ws:, wss:, http: or https:)')
    path = parts.path if parts.path.endswith("/sdk") else f"{parts.path.rstrip('/')}/sdk"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def retryable(exc: Exception, ever_registered: bool) -> Exception | None:
    """websockets' ``process_exception``: None retries with backoff, an exception ends ``listen()``. A refused secret
    (401) ends it only before the client ever registered (afterwards the secret may be mid-rotation)."""
    if isinstance(exc, InvalidURI):
        return exc
    if isinstance(exc, InvalidStatus) and exc.response.status_code == 401:
        if not ever_registered:
            return ParleyConnectionError("Parley refused the SDK secret (401)", 401)
        log.warning("Parley refused the SDK secret (401): was it rotated? Retrying.")
        return None
    log.info("Could not connect to Parley (%s); retrying", exc)
    return None
