"""Parley's calls of the exposed tools: an ``invoke`` run and answered with a ``result`` frame (a tool's failure is
reported to the model, never a crash), and a ``summarize`` answered with the tool's own confirmation summary."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from .protocol import (
    InvokeFrame,
    ResultErrorFrame,
    ResultOkFrame,
    SummarizeFrame,
    SummaryFrame,
    ToolError,
    dump,
)
from .tools import Context, ResultNotJson, Tool, describe_validation_error, receipt_text
from .tools import ToolError as ToolFailure

log = logging.getLogger("parley")


def failure(invoke_id: str, code: str, message: str) -> ResultErrorFrame:
    error = ToolError(message=message[:4000], code=code[:128])
    return ResultErrorFrame(type="result", id=invoke_id, ok=False, error=error)


async def maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def run_invoke(tools: Mapping[str, Tool], frame: InvokeFrame) -> ResultOkFrame | ResultErrorFrame:
    """Runs the invoked tool with the frame's arguments; every outcome is a result frame."""
    tool = tools.get(frame.name)
    if tool is None:
        return failure(frame.id, "unknown_function", f'"{frame.name}" is not exposed by this SDK')
    locale = frame.context.locale
    try:
        data, receipt = await tool.run_with_receipt(frame.args, Context.of(frame.id, frame.context))
    except ValidationError as err:
        return failure(frame.id, "invalid_args", describe_validation_error(err))
    except ResultNotJson as err:
        return failure(frame.id, "unserializable_result", str(err))
    except Exception as err:  # noqa: BLE001 (a tool's failure is reported to the model, never a crash)
        code = err.code if isinstance(err, ToolFailure) else getattr(err, "code", None)
        failed = failure(frame.id, code if isinstance(code, str) else "handler_error", str(err) or type(err).__name__)
        said = receipt_text(getattr(err, "receipt", None), locale)
        return failed.model_copy(update={"receipt": said}) if said else failed
    return ResultOkFrame(type="result", id=frame.id, ok=True, data=data, receipt=receipt)


def dump_result(invoke_id: str, result: ResultOkFrame | ResultErrorFrame) -> dict[str, Any]:
    """The result frame as sent; one pydantic cannot dump is still answered, as ``unserializable_result``."""
    try:
        return dump(result)
    except Exception as err:  # noqa: BLE001 (a result pydantic cannot dump is still answered)
        return dump(failure(invoke_id, "unserializable_result", str(err)))


async def summarize(tools: Mapping[str, Tool], frame: SummarizeFrame) -> SummaryFrame:
    """Parley asks for a tool's own confirmation summary: answered with the text, or none (Parley falls back)."""
    tool = tools.get(frame.name)
    text: str | None = None
    try:
        text = await tool.summary_for(frame.args, frame.locale) if tool is not None else None
    except Exception:  # noqa: BLE001 (a failing summary function falls back to Parley's words)
        log.exception("The summary function of %s failed", frame.name)
    return SummaryFrame(type="summary", id=frame.id, text=text)
