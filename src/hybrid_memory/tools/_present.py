"""The one place a tool's pydantic result becomes what the client gets: bounded data and compact text.

``structuredContent`` is the result, validated against the advertised output schema and
cut to the budget; the text ``content`` the model reads is :mod:`~hybrid_memory.tools.render`'s
rendering of the same cut result. The call's ``max_tokens`` (default
:data:`~hybrid_memory.tools.budget.DEFAULT_TOKENS`) bounds the text; the whole response
stays under :data:`RESPONSE_TOKENS` whatever is stored.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from hybrid_memory.tools import render
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import DEFAULT_TOKENS, MIN_TOKENS, Tokenizer, bound, count_within

RESPONSE_TOKENS = 20_000
"""Text and structured content together, below the 25,000 tokens at which clients cut tool output."""
_TRIES = 4


def present(result: BaseModel, args: Mapping[str, Any], tokens: Tokenizer) -> CallToolResult:
    """``result`` bounded: its text within ``max_tokens``, text and data together within the cap."""
    wanted = int(args.get("max_tokens") or DEFAULT_TOKENS)
    explain = bool(args.get("explain", False))
    budget = wanted
    for _ in range(_TRIES):
        bounded, omitted = bound(result, budget, tokens, args)
        text = render.render(bounded, explain=explain, omitted=omitted)
        data = bounded.model_dump(mode="json", by_alias=True)
        # Upper bounds where they already fit: tokenizing a whole answer twice cost more CPU than recall.
        used = count_within(text, wanted, tokens)
        data_tokens = count_within(json.dumps(data), RESPONSE_TOKENS - used, tokens)
        over = max(used - wanted, used + data_tokens - RESPONSE_TOKENS)
        if over <= 0 or budget <= MIN_TOKENS // 2:
            break
        # Rendering adds a little the bounding cannot see (headers, joins): shrink by what overflowed.
        budget = max(budget - over - 16, MIN_TOKENS // 2)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def presented(fn: Callable[..., Awaitable[BaseModel]]) -> Callable[..., Awaitable[CallToolResult]]:
    """``fn`` answering with :func:`present`; it advertises ``fn``'s result model as its output schema."""
    signature = inspect.signature(fn, eval_str=True)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
        result = await fn(*args, **kwargs)
        ctx: AppCtx = kwargs["ctx"]
        return present(result, kwargs, app(ctx).service.embedder)

    # The SDK's documented form: the CallToolResult is returned as is, its structured content
    # validated against the model in the annotation, which stays the advertised outputSchema.
    returns = Annotated[CallToolResult, signature.return_annotation]
    wrapper.__signature__ = signature.replace(return_annotation=returns)  # type: ignore[attr-defined]
    return wrapper
