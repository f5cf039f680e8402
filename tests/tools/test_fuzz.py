"""Hypothesis calls every tool over MCP with arguments drawn from its own schema, and with junk.

After a bounded, derandomized run: no error reply over 2,000 characters, no bare
"Error executing tool <name>" (an unexpected exception) for input the schema allows,
no exception escaping a call, and a memory stored before is still recalled.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call

EXAMPLES = 200
MAX_ERROR_CHARS = 2000
CANARY = "The canary word for this store is quetzal-amber."

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=120)
JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def from_schema(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the JSON schema of a tool argument allows (a useful subset of JSON Schema)."""
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return st.one_of(*(from_schema(s, defs) for s in schema["anyOf"]))
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(
            st.characters(exclude_categories=("Cs",)),
            min_size=schema.get("minLength", 0),
            max_size=min(schema.get("maxLength", 120), 120),
        )
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**6)), schema.get("maximum", 10**6))
    if kind == "number":
        return st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs)
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object":
        return arguments(schema, defs)
    return JUNK


def arguments(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {name: from_schema(p, defs) for name, p in properties.items() if name in required},
        optional={name: from_schema(p, defs) for name, p in properties.items() if name not in required},
    )


def adversarial(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Junk under the tool's own argument names and under unknown ones."""
    names = [*schema.get("properties", {}), "unknown_argument"]
    return st.dictionaries(st.sampled_from(names) | st.text(max_size=8), JUNK, max_size=4)


def error_text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_random_and_adversarial_calls_to_every_tool_keep_the_server_sound(
    server: MCPServer[Any],
) -> None:
    problems: list[str] = []
    async with Client(server) as client:
        canary = await call(
            client, "remember_thread", thread_id="canary", messages=[{"role": "user", "content": CANARY}]
        )
        tools = (await client.list_tools()).tools

        @hypothesis_settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def one_call(data: st.DataObject) -> None:
            tool = data.draw(st.sampled_from(tools), label="tool")
            schema = tool.input_schema
            valid = data.draw(st.booleans(), label="valid")
            drawn = arguments(schema, schema.get("$defs", {})) if valid else adversarial(schema)
            args = data.draw(drawn, label="arguments")
            try:
                result = anyio.from_thread.run(client.call_tool, tool.name, args)
            except Exception as exc:  # collected, not raised: one report lists every kind of failure
                problems.append(f"{tool.name}({args!r:.200}) raised {type(exc).__name__}: {exc!s:.200}")
                return
            if not result.is_error:
                return
            text = error_text(result)
            if len(text) > MAX_ERROR_CHARS:
                problems.append(f"{tool.name}: a {len(text)}-character error")
            if valid and text.strip() == f"Error executing tool {tool.name}":
                problems.append(f"{tool.name}({args!r:.200}) failed unexpectedly on valid input")

        with anyio.fail_after(600):
            await anyio.to_thread.run_sync(one_call)
            recalled = await call(client, "recall_memory", query="What is the canary word?", limit=10)

    assert problems == []
    assert canary["memory_ids"][0] in [r["id"] for r in recalled["results"]]
