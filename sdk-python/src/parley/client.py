"""The Parley backend client: dials out to Parley's ``/sdk`` WebSocket, registers the tools, answers invokes,
delivers outbound messages (``on_send``) and hands inbound ones over (``ingest``). Reconnects by itself, with
websockets' reconnecting ``connect`` iterator and Parley's backoff (0.5 s doubling to 30 s, with jitter).

This module holds the connection's life and routes Parley's frames; the parts it hands them to: ``calls`` (invokes and
summaries), ``outbound`` (deliveries for ``on_send``), ``connection`` (the URL and which failures are retried)."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Literal, TypeVar, overload

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from ._version import __version__ as _version
from .backoff import backoff_delays
from .calls import dump_result, maybe_await, run_invoke, summarize
from .connection import ParleyConnectionError, retryable, sdk_url
from .conversations import Conversations
from .media import DownloadedMedia, download_media
from .protocol import (
    MAX_FRAME_BYTES,
    AckFrame,
    CustomerMessageFrame,
    CustomerMessageNotice,
    ErrorFrame,
    FunctionMode,
    HandoffFrame,
    HandoffNotice,
    IngestFrame,
    InvokeFrame,
    RegisteredFrame,
    RegisterFrame,
    ResultErrorFrame,
    ResultOkFrame,
    SdkInfo,
    SendFrame,
    SummarizeFrame,
    dump,
    parse_server_frame,
)
from .outbound import OutboundMessage, SendHandler, deliver
from .reconnect import connections
from .tools import SummaryFunction, Tool, describe_validation_error, make_tool

__all__ = ["Client", "CustomerMessageHandler", "HandoffHandler", "OutboundMessage", "ParleyConnectionError", "SendHandler", "sdk_url"]

log = logging.getLogger("parley")

F = TypeVar("F", bound=Callable[..., Any])
SDK_NAME = "parley-sdk"

HandoffHandler = Callable[[HandoffNotice], "None | Awaitable[None]"]
CustomerMessageHandler = Callable[[CustomerMessageNotice], "None | Awaitable[None]"]


class Client:
    """``client = parley.Client(url="http://127.0.0.1:3000", secret=os.environ["SERVICE_SDK_SECRET"])``."""

    def __init__(
        self,
        *,
        url: str,
        secret: str,
        sdk: tuple[str, str] = (SDK_NAME, _version),
        open_timeout: float = 10.0,
        ingest_timeout: float = 30.0,
        backoff: tuple[float, float] = (0.5, 30.0),
    ) -> None:
        self._url = sdk_url(url)
        self._secret = secret
        self._sdk = SdkInfo(name=sdk[0], version=sdk[1])
        self._open_timeout = open_timeout
        self._ingest_timeout = ingest_timeout
        self._backoff = backoff
        self._tools: dict[str, Tool] = {}
        self._send_handler: SendHandler | None = None
        self._handoff_handlers: list[HandoffHandler] = []
        self._customer_message_handlers: list[CustomerMessageHandler] = []
        self._ws: ClientConnection | None = None
        self._registered = asyncio.Event()
        self._ever_registered = False
        self._closed = False
        self._runner: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None  # start()'s background listen()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inflight: dict[str, asyncio.Task[ResultOkFrame | ResultErrorFrame]] = {}
        self._ingests: dict[str, asyncio.Future[AckFrame]] = {}
        #: How many times Parley acknowledged a registration (a reconnect registers again).
        self.registrations = 0
        #: The agent API (human handoff) over HTTP, with this client's url and secret.
        self.conversations = Conversations(url, secret)

    # Declaring --------------------------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        mode: FunctionMode = "read",
        visitors: bool = False,
        summary: Mapping[str, str] | SummaryFunction | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        mode: FunctionMode = "read",
        visitors: bool = False,
        summary: Mapping[str, str] | SummaryFunction | None = None,
    ) -> F | Callable[[F], F]:
        """Exposes a typed function (sync or async) as a tool. ``mode``: ``read`` runs at once; ``write`` and
        ``destructive`` wait for the customer's confirmation. A parameter named ``ctx`` (or typed ``Context``)
        receives the call's ``Context``. ``summary``: what the confirmation card asks, per locale — templates filled
        from the arguments (``{"en": "Cancel order {order_id}", "es": "Cancelar el pedido {order_id}"}``) or a
        function of the arguments (a dict) and the locale, run when Parley asks. The function is returned unchanged."""

        def expose(f: F) -> F:
            tool = make_tool(f, name=name, description=description, mode=mode, visitors=visitors, summary=summary)
            if tool.name in self._tools:
                raise ValueError(f'"{tool.name}" is already exposed')
            self._tools[tool.name] = tool
            self._register_again()
            return f

        return expose(fn) if fn is not None else expose

    def on_send(self, handler: F) -> F:
        """Delivers Parley's outbound messages (provider ``sdk``): return your provider's message id (or None);
        raise to report a failed delivery (Parley retries with the same ``message.id``)."""
        had = self._send_handler is not None
        self._send_handler = handler
        if not had:
            self._register_again()
        return handler

    def on_handoff(self, handler: F) -> F:
        """Live: a conversation was handed to a person (``phase="requested"``) or given back (``"released"``)."""
        self._handoff_handlers.append(handler)
        return handler

    def on_customer_message(self, handler: F) -> F:
        """Live: a customer wrote in a conversation a person has (the model does not answer it)."""
        self._customer_message_handlers.append(handler)
        return handler

    @property
    def tools(self) -> dict[str, Tool]:
        return dict(self._tools)

    @property
    def connected(self) -> bool:
        return self._ws is not None

    @property
    def registered(self) -> bool:
        return self._registered.is_set()

    # Running ----------------------------------------------------------------------------------------------------

    async def listen(self) -> None:
        """Connects, registers, answers; reconnects after every drop and registers again. Returns after
        ``close()``. Raises ``ParleyConnectionError`` when the very first attempt is refused with 401."""
        if self._runner is not None and not self._runner.done():
            raise RuntimeError("listen() is already running")
        self._closed = False
        # An inner task of our own, so close() can cancel a backoff sleep without touching the caller's task.
        self._runner = asyncio.get_running_loop().create_task(self._connect_loop())
        await self._runner

    async def _connect_loop(self) -> None:
        initial, maximum = self._backoff
        attempts = connections(
            self._url,
            delays=lambda: backoff_delays(initial=initial, maximum=maximum),
            process_exception=self._retryable,
            additional_headers={"Authorization": f"Bearer {self._secret}"},
            user_agent_header=f"{self._sdk.name}/{self._sdk.version} (python)",
            max_size=MAX_FRAME_BYTES,
            open_timeout=self._open_timeout,
        )
        try:
            async for ws in attempts:
                await self._serve(ws)
                if self._closed:
                    break
        except asyncio.CancelledError:
            if not self._closed:
                raise
        finally:
            await attempts.aclose()

    async def start(self, timeout: float | None = 30.0) -> None:
        """Runs ``listen()`` in the background and returns once Parley acknowledged the registration (for an
        application's start-up, e.g. FastAPI's lifespan). Raises what ``listen()`` raised, or ``TimeoutError`` (then
        ``listen()`` goes on trying in the background: ``close()`` stops it)."""
        task = asyncio.get_running_loop().create_task(self.listen())
        self._listener = task
        waiter = asyncio.ensure_future(self._registered.wait())
        done, _ = await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            if task in done:
                task.result()  # raises listen()'s error
                raise ParleyConnectionError("The client was closed before it registered")
            raise TimeoutError(f"Parley did not acknowledge the registration within {timeout} s")

    async def wait_registered(self, timeout: float | None = None) -> None:
        """Waits until the current connection is registered."""
        await asyncio.wait_for(self._registered.wait(), timeout)

    async def close(self) -> None:
        """Stops reconnecting and closes the socket."""
        self._closed = True
        ws, task = self._ws, self._runner
        if ws is not None:
            await ws.close(1000, "client closed")
        if task is not None and not task.done():
            if ws is None:
                task.cancel()  # between attempts (backoff) or connecting: nothing to close politely
            await asyncio.wait({task}, timeout=5)
            if not task.done():
                task.cancel()
        for t in list(self._tasks):
            t.cancel()

    async def ingest(self, *, channel: Literal["web", "whatsapp"], from_: str, text: str, message_id: str | None = None) -> AckFrame:
        """Hands an inbound message your own webhook received to Parley (provider ``sdk``). Never raises: the ack
        says ``ok=False`` with ``error`` ``not connected``, ``timeout``, ``disconnected`` or Parley's reason."""
        ingest_id = str(uuid.uuid4())
        try:
            frame = IngestFrame(type="ingest", id=ingest_id, channel=channel, from_=from_, text=text, messageId=message_id)
        except ValidationError as err:
            return AckFrame(type="ack", id=ingest_id, ok=False, error=describe_validation_error(err))
        future: asyncio.Future[AckFrame] = asyncio.get_running_loop().create_future()
        self._ingests[frame.id] = future
        try:
            if not self.registered or not await self._send(dump(frame)):
                return AckFrame(type="ack", id=frame.id, ok=False, error="not connected")
            return await asyncio.wait_for(future, self._ingest_timeout)
        except asyncio.TimeoutError:
            return AckFrame(type="ack", id=frame.id, ok=False, error="timeout")
        finally:
            self._ingests.pop(frame.id, None)

    async def download_media(self, media_id: str, *, timeout: float = 60.0) -> DownloadedMedia:
        """A file a customer sent on WhatsApp (the ``mediaId`` of a media message's content), downloaded by Parley from
        Meta with the channel's token. Raises ``ParleyMediaError``."""
        return await download_media(self._url, self._secret, media_id, timeout)

    # The connection ---------------------------------------------------------------------------------------------

    def _retryable(self, exc: Exception) -> Exception | None:
        """websockets' ``process_exception``: None retries with backoff, an exception ends ``listen()``."""
        return retryable(exc, self._ever_registered)

    async def _serve(self, ws: ClientConnection) -> None:
        self._ws = ws
        try:
            await ws.send(json.dumps(self._register_frame()))
            async for raw in ws:
                self._on_frame(raw)
        except ConnectionClosed:
            pass
        finally:
            self._ws = None
            self._registered.clear()
            for ingest_id, future in list(self._ingests.items()):
                if not future.done():
                    future.set_result(AckFrame(type="ack", id=ingest_id, ok=False, error="disconnected"))
            if not self._closed:
                log.warning("Disconnected from Parley (%s); reconnecting", ws.close_code)

    def _register_frame(self) -> dict[str, Any]:
        functions = [t.declaration for t in self._tools.values()]
        frame = RegisterFrame(type="register", functions=functions, sdk=self._sdk, sendProvider=self._send_handler is not None)
        return dump(frame)

    def _register_again(self) -> None:
        """A tool or a send provider added while connected: the live connection registers again."""
        if self._ws is None:
            return
        try:
            self._spawn(self._send(self._register_frame()))
        except RuntimeError:
            pass  # no running loop in this thread: the next connection registers everything

    async def _send(self, frame: dict[str, Any]) -> bool:
        ws = self._ws
        if ws is None:
            return False
        try:
            await ws.send(json.dumps(frame))
            return True
        except ConnectionClosed:
            return False

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_frame(self, raw: str | bytes) -> None:
        try:
            frame = parse_server_frame(raw)
        except ValidationError as err:
            message = f"SDK could not read a frame: {describe_validation_error(err)}"[:1000]
            self._spawn(self._send(dump(ErrorFrame(type="error", code="bad_frame", message=message))))
            return
        if isinstance(frame, RegisteredFrame):
            self._ever_registered = True
            self.registrations += 1
            self._registered.set()
            log.info("Registered with Parley (%d functions)", frame.functions)
        elif isinstance(frame, InvokeFrame):
            self._spawn(self._on_invoke(frame))
        elif isinstance(frame, SendFrame):
            self._spawn(self._on_send_frame(frame))
        elif isinstance(frame, SummarizeFrame):
            self._spawn(self._on_summarize(frame))
        elif isinstance(frame, AckFrame):
            future = self._ingests.get(frame.id)
            if future is not None and not future.done():
                future.set_result(frame)
        elif isinstance(frame, HandoffFrame):
            notice = HandoffNotice.model_validate(frame.model_dump(exclude={"type"}))
            self._spawn(self._notify(self._handoff_handlers, notice))
        elif isinstance(frame, CustomerMessageFrame):
            said = CustomerMessageNotice.model_validate(frame.model_dump(exclude={"type"}))
            self._spawn(self._notify(self._customer_message_handlers, said))
        else:
            log.warning("Parley reported %s: %s", frame.code, frame.message)

    async def _notify(self, handlers: list[Callable[[Any], Any]], notice: Any) -> None:
        for handler in handlers:
            try:
                await maybe_await(handler(notice))
            except Exception:  # a handler's failure is the integrator's: logged, never a crash
                log.exception("A notice handler failed")

    # Invokes and sends ------------------------------------------------------------------------------------------

    async def _on_invoke(self, frame: InvokeFrame) -> None:
        # The same invoke id again (a retry) while the first run is in flight: both are answered from one run.
        running = self._inflight.get(frame.id)
        if running is None:
            running = asyncio.get_running_loop().create_task(run_invoke(self._tools, frame))
            self._inflight[frame.id] = running
            running.add_done_callback(lambda _: self._inflight.pop(frame.id, None))
        result = await asyncio.shield(running)
        await self._send(dump_result(frame.id, result))

    async def _on_summarize(self, frame: SummarizeFrame) -> None:
        await self._send(dump(await summarize(self._tools, frame)))

    async def _on_send_frame(self, frame: SendFrame) -> None:
        await self._send(dump(await deliver(self._send_handler, frame)))
