"""A file a customer sent on WhatsApp, for a tool: Parley downloads it from Meta's Graph API with the channel's token
(which neither your backend nor the model ever sees) and streams it back (``GET /whatsapp/media/:mediaId``, service
secret). As the Node SDK's ``downloadMedia``."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from .conversations import http_base_url


@dataclass(frozen=True)
class DownloadedMedia:
    media_id: str
    data: bytes
    mime_type: str
    #: Bytes.
    size: int
    #: Meta's hash of the file, when the Graph API gave one.
    sha256: str | None = None


class ParleyMediaError(Exception):
    """``status`` from Parley (0: not reached) and its ``code``: ``media_not_found``, ``media_unavailable``,
    ``upstream_error``, ``unauthorized``, ``validation_failed``, ``network_error``."""

    def __init__(self, message: str, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _fetch(url: str, secret: str, media_id: str, timeout: float) -> DownloadedMedia:
    path = f"/whatsapp/media/{urllib.parse.quote(media_id, safe='')}"
    request = urllib.request.Request(f"{http_base_url(url)}{path}", headers={"authorization": f"Bearer {secret}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http(s) only)
            data = response.read()
            return DownloadedMedia(
                media_id=media_id,
                data=data,
                mime_type=response.headers.get("content-type", "application/octet-stream"),
                size=len(data),
                sha256=response.headers.get("x-whatsapp-sha256"),
            )
    except urllib.error.HTTPError as err:
        try:
            error = json.loads(err.read().decode("utf-8")).get("error", {})
        except (ValueError, AttributeError, UnicodeDecodeError):
            error = {}
        error = error if isinstance(error, dict) else {}
        message, code = error.get("message"), error.get("code")
        raise ParleyMediaError(
            message if isinstance(message, str) else f"Parley answered HTTP {err.code}",
            err.code,
            code if isinstance(code, str) else f"http_{err.code}",
        ) from None
    except (urllib.error.URLError, OSError) as err:
        raise ParleyMediaError(f"Could not reach Parley for media {media_id}: {err}", 0, "network_error") from None


async def download_media(url: str, secret: str, media_id: str, timeout: float = 60.0) -> DownloadedMedia:
    return await asyncio.to_thread(_fetch, url, secret, media_id, timeout)
