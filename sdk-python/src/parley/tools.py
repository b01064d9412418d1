"""A typed Python function as a Parley tool: its JSON Schema from the type hints and the docstring, its arguments
validated by pydantic before it runs, its result made JSON."""

from __future__ import annotations

import asyncio
import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

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

    @classmethod
    def of(cls, invocation_id: str, context: InvokeContext) -> Context:
        return cls(
            invocation_id=invocation_id,
            customer_id=context.customerId,
            channel=context.channel,
            conversation_id=context.conversationId,
            external_id=context.externalId,
            verified=context.verified,
        )


class ResultNotJson(TypeError):
    """A tool returned a value pydantic cannot turn into JSON."""


class ToolError(Exception):
    """Raise it from a tool to fail the call with a message the assistant is told (and a machine-readable code)."""

    def __init__(self, message: str, code: str = "handler_error") -> None:
        super().__init__(message)
        self.code = code


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

    @property
    def name(self) -> str:
        return self.declaration.name

    async def run(self, args: Any, ctx: Context) -> Any:
        """Validates ``args`` (raises ``ValidationError``), runs the handler (a sync one in a worker thread) and
        returns its result as JSON-able data (raises ``ResultNotJson`` when it is not)."""
        parsed = self.arguments.model_validate({} if args is None else args)
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        if self.context_parameter:
            kwargs[self.context_parameter] = ctx
        if self.is_async:
            result = await self.handler(**kwargs)
        else:
            result = await asyncio.to_thread(self.handler, **kwargs)
        try:
            return to_jsonable_python(result)
        except PydanticSerializationError as err:
            raise ResultNotJson(f"The tool's result is not JSON: {err}") from None


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
) -> Tool:
    """Builds the declaration and the argument model of ``fn`` from its signature and docstring."""
    summary, docs = parse_docstring(fn.__doc__)
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
        description=(description if description is not None else summary)[:2000],
        parameters=schema,
        mode=mode,
        visitors=visitors,
    )
    is_async = inspect.iscoroutinefunction(fn)
    return Tool(declaration, arguments, fn, context_parameter, is_async)
