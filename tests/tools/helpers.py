"""Calling tools and reading their structured results."""

from __future__ import annotations

from typing import Any

from mcp import Client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; return its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {result.content}"
    return result.structured_content


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; return the error text the model would read."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    return "".join(getattr(block, "text", "") for block in result.content)


async def snapshot(client: Client) -> Any:
    """Everything a test can see of the store, to show a failed call changed nothing."""
    threads = await call(client, "list_threads", limit=500)
    everything = await call(client, "recall_memory", query="anything at all", limit=50, include_invalid=True)
    return threads, sorted((r["id"], r["text"], r["valid_to"]) for r in everything["results"])
