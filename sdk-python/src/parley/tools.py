"""A typed Python function as a Parley tool: its JSON Schema from the type hints and the docstring, its arguments
validated by pydantic before it runs, its result made JSON."""

from __future__ import annotations

import asyncio
import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .protocol import FunctionDeclaration, FunctionMode, InvokeContext


@dataclass(frozen=True)
class Context:
    """Who and what a tool call is for. ``invocation_id`` is the same on every retry of one tool call (also after a
    Parley restart): use it as the idempotency key of any write."""

    invocation_id: str
    customer_id: str
    channel: Literal["web", "whatsapp"]
    conversation_id: str
    #: Your own id of the customer (their WhatsApp number for a customer first seen on WhatsApp), when known.
    external_id: str | None = None
    #: The customer proved who they are (signed in, or writing from their WhatsApp number); false for a visitor.
    verified: bool = False
    #: The customer's locale (``es``, ``es-MX``): the widget's browser language, or the WhatsApp default; None when unknown.
    locale: str | None = None

    @classmethod
    def of(cls, invocation_id: str, context: InvokeContext) -> Context:
        return cls(
            invocation_id=invocation_id,
            customer_id=context.customerId,
            channel=context.channel,
            conversation_id=context.conversationId,
            external_id=context.externalId,
            verified=context.verified,
            locale=context.locale,
        )


class ResultNotJson(TypeError):
    """A tool returned a value pydantic cannot turn into JSON."""


#: Texts per locale (``{"en": "…", "es": "…"}``), or one text for every locale.
Localized = Union[str, Mapping[str, str]]
#: A confirmation summary computed by the backend from the arguments (a dict) and the customer's locale; None: Parley words it.
SummaryFunction = Callable[[dict[str, Any], str], Union[str, None, Awaitable[Union[str, None]]]]


class ToolError(Exception):
    """Raise it from a tool to fail the call with a message the assistant is told (and a machine-readable code).
    ``receipt``: what the customer reads where they approved the action ("Could not cancel order 1002: it has already
    shipped"), one text or texts per locale; without it Parley derives one from the summary and the message."""

    def __init__(self, message: str, code: str = "handler_error", receipt: Localized | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.receipt = receipt


@dataclass(frozen=True)
class WithReceipt:
    """A tool's result with the words the customer reads once the action ran (see ``with_receipt``)."""

    data: Any
    receipt: Localized


def with_receipt(data: Any, receipt: Localized) -> Any:
    """``return with_receipt(order, {"en": "Order 1001 cancelled", "es": "Pedido 1001 cancelado"})``: the data goes to
    the assistant, the receipt (in the customer's locale) to the customer where they approved."""
    return WithReceipt(data, receipt)


def pick_localized(texts: Localized | None, locale: str | None) -> str | None:
    """The text for ``locale``: the exact tag, its language, a variant of that language, English, else the first."""
    if texts is None or isinstance(texts, str):
        return texts
    keys = list(texts)
    tag = (locale or "").lower()
    lang = tag.split("-")[0]
    ranks: list[Callable[[str], bool]] = [
        lambda k: k.lower() == tag,
        lambda k: k.lower() == lang,
        lambda k: k.split("-")[0].lower() == lang,
        lambda k: k.lower() == "en",
    ]
    for match in ranks:
        found = next((k for k in keys if match(k)), None)
        if found is not None:
            return texts[found]
    return texts[keys[0]] if keys else None


def receipt_text(texts: Any, locale: str | None) -> str | None:
    """A receipt (a string or texts per locale) in the locale, trimmed to what the wire takes; None when there is none."""
    if not isinstance(texts, (str, Mapping)):
        return None
    text = pick_localized(texts, locale)
    return text.strip()[:500] or None if isinstance(text, str) else None


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_GOOGLE_ARG = re.compile(r"^\s+(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_ARG_SECTIONS = ("args", "arguments", "parameters", "params")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary (text before any section) and each argument's description (Google ``Args:`` or ``:param x:``)."""
    if not doc:
        return "", {}
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in inspect.cleandoc(doc).splitlines():
        indent = len(line) - len(line.lstrip())
        sphinx = _SPHINX_ARG.match(line)
        heading = _SECTION.match(line)
        arg = _GOOGLE_ARG.match(line)
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
        elif heading:
            section, current, arg_indent = heading.group(1).lower(), None, None
        elif section is None:
            summary.append(line)
        elif section in _ARG_SECTIONS and arg and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = arg.group(1).lstrip("*")
            params[current] = arg.group(2).strip()
        elif section in (*_ARG_SECTIONS, "sphinx") and current and line.strip() and not line.lstrip().startswith(":"):
            params[current] = f"{params[current]} {line.strip()}".strip()
    return " ".join(" ".join(summary).split()), params


def _strip_titles(schema: Any) -> Any:
    """pydantic's generated ``title`` keys say nothing the property names don't, and cost the model tokens."""
    if isinstance(schema, list):
        return [_strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {k: _strip_titles(v) for k, v in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


def describe_validation_error(error: ValidationError) -> str:
    """``quantity: Input should be greater than or equal to 1; sku: Field required`` (like the Node SDK's)."""
    parts = []
    for issue in error.errors(include_url=False):
        path = ".".join(str(p) for p in issue["loc"]) or "(args)"
        parts.append(f"{path}: {issue['msg']}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Tool:
    declaration: FunctionDeclaration
    arguments: type[BaseModel]
    handler: Callable[..., Any]
    #: The name of the handler's parameter that receives the ``Context`` (None: it takes none).
    context_parameter: str | None
    is_async: bool
    #: The backend's own confirmation summary (``summary=`` given a function), run when Parley asks.
    summarize: SummaryFunction | None = None

    @property
    def name(self) -> str:
        return self.declaration.name

    async def run(self, args: Any, ctx: Context) -> Any:
        """Validates ``args`` (raises ``ValidationError``), runs the handler (a sync one in a worker thread) and
        returns its result as JSON-able data (raises ``ResultNotJson`` when it is not)."""
        data, _ = await self.run_with_receipt(args, ctx)
        return data

    async def run_with_receipt(self, args: Any, ctx: Context) -> tuple[Any, str | None]:
        """As ``run``, with the receipt the handler gave (``with_receipt``) in the call's locale, or None."""
        parsed = self.arguments.model_validate({} if args is None else args)
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        if self.context_parameter:
            kwargs[self.context_parameter] = ctx
        if self.is_async:
            result = await self.handler(**kwargs)
        else:
            result = await asyncio.to_thread(self.handler, **kwargs)
        receipt = None
        if isinstance(result, WithReceipt):
            receipt = receipt_text(result.receipt, ctx.locale)
            result = result.data
        try:
            return to_jsonable_python(result), receipt
        except PydanticSerializationError as err:
            raise ResultNotJson(f"The tool's result is not JSON: {err}") from None

    async def summary_for(self, args: Any, locale: str) -> str | None:
        """The backend's own summary of these arguments in ``locale`` (``summary=`` a function); None when it has none."""
        if self.summarize is None:
            return None
        parsed = self.arguments.model_validate({} if args is None else args)
        values = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        out = self.summarize(values, locale)
        text = await out if inspect.isawaitable(out) else out
        return text.strip()[:300] or None if isinstance(text, str) else None


def _is_context(name: str, annotation: Any) -> bool:
    """A parameter named ``ctx``, or typed ``Context`` (also ``Context | None``), receives the call's context."""
    if name == "ctx" or annotation is Context:
        return True
    return Context in typing.get_args(annotation)


def _parameter_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The parameters' type hints, resolved (``from __future__ import annotations`` makes them strings). The return
    annotation is left out: a tool's result needs no schema, and it may name a type only the function's scope has."""
    raw = dict(getattr(fn, "__annotations__", {}))
    raw.pop("return", None)

    def shim() -> None: ...

    shim.__annotations__ = raw
    try:
        return typing.get_type_hints(shim, globalns=getattr(fn, "__globals__", None), include_extras=True)
    except NameError as err:
        raise TypeError(f"{getattr(fn, '__name__', fn)}: {err} (define a tool's parameter types at module level)") from None


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    mode: FunctionMode = "read",
    visitors: bool = False,
    summary: Mapping[str, str] | SummaryFunction | None = None,
) -> Tool:
    """Builds the declaration and the argument model of ``fn`` from its signature and docstring."""
    doc_summary, docs = parse_docstring(fn.__doc__)
    hints = _parameter_hints(fn)
    fields: dict[str, Any] = {}
    context_parameter: str | None = None
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"{fn.__name__}: a tool takes named parameters, not *{param.name}")
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{fn.__name__}: a tool's parameters are passed by name ({param.name} is positional-only)")
        if _is_context(param.name, annotation):
            context_parameter = param.name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        kind = Any if annotation is inspect.Parameter.empty else annotation
        doc = docs.get(param.name)
        fields[param.name] = (kind, Field(default, description=doc) if doc else default)
    arguments = create_model(
        f"{fn.__name__}_arguments", __config__=ConfigDict(extra="ignore"), **fields
    )
    schema = _strip_titles(arguments.model_json_schema())
    declaration = FunctionDeclaration(
        name=name or fn.__name__,
        description=(description if description is not None else doc_summary)[:2000],
        parameters=schema,
        mode=mode,
        visitors=visitors,
        summary=dict(summary) if isinstance(summary, Mapping) else None,
        summarizes=callable(summary),
    )
    is_async = inspect.iscoroutinefunction(fn)
    summarize = summary if callable(summary) else None
    return Tool(declaration, arguments, fn, context_parameter, is_async, summarize)
