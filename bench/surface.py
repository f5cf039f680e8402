"""What the agent reads: the tool list's tokens, and a recall answer's tokens against its payload.

    python bench/surface.py [--claude-tokenizer PATH/tokenizer.json] [--out bench/results/surface.json]

Drives the real server in-process through the SDK's client (embedded stores, the real
model from ``HYBRID_MEMORY_EMBEDDING_MODEL_PATH``) and prints:

- tools/list: every tool's name + description + input schema (compact JSON), in tokens,
  for the full tool set and for ``HYBRID_MEMORY_TOOLS=core``;
- recall: a 5-hit ``recall_memory`` answer's text content against its payload (the
  hits' own texts), and its structured content, in characters and tokens.

Tokens are counted with the embedding model's tokenizer (BERT WordPiece, the one
the server's budgets use) and with Claude's tokenizer.json as ``anthropic`` releases up
to 0.34 ship it (a test extra; ``--claude-tokenizer`` names another file). Claude 3 and
later count somewhat differently and publish no tokenizer: take that column as close, not exact.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from tokenizers import Tokenizer

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import load_settings

THREAD = [
    ("user", "I adopted a beagle puppy named Biscuit last weekend."),
    ("assistant", "Congratulations! Beagles are energetic and friendly."),
    ("user", "My sister is flying in from Lisbon on Friday."),
    ("assistant", "I added the airport pickup to your calendar."),
    ("user", "Biscuit chewed through my running shoes this morning."),
    ("assistant", "Puppies chew when teething; a frozen carrot helps."),
    ("user", "We are thinking of taking Biscuit to the lake house in June."),
    ("assistant", "Check whether the lake house allows dogs before booking."),
]
QUERY = "what do I know about Biscuit the dog?"


def packaged_claude_tokenizer() -> Path | None:
    """The tokenizer.json inside an installed ``anthropic`` (<= 0.34), found without importing it."""
    spec = importlib.util.find_spec("anthropic")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "tokenizer.json"
    return path if path.is_file() else None


def tool_text(tool: Any) -> str:
    schema = json.dumps(tool.input_schema, separators=(",", ":"))
    return f"{tool.name}\n{tool.description or ''}\n{schema}"


async def measure(data_dir: Path, tool_set: str, embedder: Any) -> dict[str, Any]:
    settings = load_settings(data_dir=data_dir, tools=tool_set)
    async with Client(build_server(settings, embedder=embedder)) as client:
        tools = (await client.list_tools()).tools
        out: dict[str, Any] = {"tools": {t.name: tool_text(t) for t in tools}}
        if tool_set == "core":
            return out
        messages = [{"role": r, "content": c, "id": f"m{i}"} for i, (r, c) in enumerate(THREAD)]
        await client.call_tool("remember_thread", {"thread_id": "bench", "messages": messages})
        result = await client.call_tool("recall_memory", {"query": QUERY, "limit": 5})
        out["recall_text"] = "".join(getattr(b, "text", "") for b in result.content)
        out["recall_json"] = json.dumps(result.structured_content, separators=(",", ":"))
        out["payload"] = [h["text"] for h in result.structured_content["results"]]
        return out


def report(name: str, count: Any, full: dict[str, Any], core: dict[str, Any]) -> dict[str, Any]:
    per_tool = {n: count(t) for n, t in full["tools"].items()}
    payload = "\n".join(full["payload"])
    row = {
        "tokenizer": name,
        "tools_list_tokens": sum(per_tool.values()),
        "tools": len(per_tool),
        "core_tools_list_tokens": sum(count(t) for t in core["tools"].values()),
        "core_tools": len(core["tools"]),
        "per_tool": per_tool,
        "recall_hits": len(full["payload"]),
        "recall_payload_chars": len(payload),
        "recall_payload_tokens": count(payload),
        "recall_text_chars": len(full["recall_text"]),
        "recall_text_tokens": count(full["recall_text"]),
        "recall_structured_chars": len(full["recall_json"]),
        "recall_structured_tokens": count(full["recall_json"]),
    }
    print(
        f"[{name}] tools/list: {row['tools_list_tokens']} tokens ({row['tools']} tools); "
        f"core: {row['core_tools_list_tokens']} ({row['core_tools']} tools)\n"
        f"[{name}] recall of {row['recall_hits']} hits: text {row['recall_text_tokens']} tokens / "
        f"{row['recall_text_chars']} chars for a payload of {row['recall_payload_tokens']} tokens / "
        f"{row['recall_payload_chars']} chars "
        f"({row['recall_text_tokens'] / max(row['recall_payload_tokens'], 1):.2f}x); "
        f"structured {row['recall_structured_tokens']} tokens"
    )
    return row


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claude-tokenizer", type=Path, help="a Claude tokenizer.json to count with too")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here")
    args = parser.parse_args()

    settings = load_settings()
    embedder = build_embedder(settings.embedding)
    with tempfile.TemporaryDirectory() as tmp:
        full = await measure(Path(tmp) / "all", "all", embedder)
        core = await measure(Path(tmp) / "core", "core", embedder)
    rows = [report("embedding model (BERT WordPiece)", embedder.count_tokens, full, core)]
    claude_path = args.claude_tokenizer or packaged_claude_tokenizer()
    if claude_path:
        claude = Tokenizer.from_file(str(claude_path))
        rows.append(report("claude", lambda t: len(claude.encode(t).ids), full, core))
    await embedder.close()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)
