"""consolidate_notes over a project with planted near-duplicates, changed values and unrelated notes."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.consolidation_data import CHANGES, DUPLICATES, UNRELATED
from tests.tools.helpers import call


async def _add(client: Client, type: str, content: str) -> str:
    note = await call(client, "create_note", content=content, type=type, force=True, tags=[content[:20]])
    return note["id"]  # type: ignore[no-any-return]


async def _live(client: Client, ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The notes still valid, by content."""
    notes = [(await call(client, "get_linked_notes", note_id=i))["notes"][0] for i in ids.values()]
    return {n["content"]: n for n in notes if n["valid_to"] is None}


async def test_consolidation_plans_then_merges_duplicates_and_supersedes_changed_values(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        ids: dict[str, str] = {}
        for type, older, newer in [*DUPLICATES, *CHANGES]:
            ids[older] = await _add(client, type, older)
            ids[newer] = await _add(client, type, newer)
        for type, content in UNRELATED:
            ids[content] = await _add(client, type, content)
        before = await call(client, "get_linked_notes", note_id=ids[UNRELATED[0][1]])

        plan = await call(client, "consolidate_notes")
        unchanged = await _live(client, ids)
        done = await call(client, "consolidate_notes", apply=True)
        live = await _live(client, ids)
        again = await call(client, "consolidate_notes")
        after = await call(client, "get_linked_notes", note_id=ids[UNRELATED[0][1]])

    assert len(unchanged) == 40
    assert plan["applied"] is False
    assert done["applied"] is True
    assert sorted(a["drop_id"] for a in plan["actions"]) == sorted(a["drop_id"] for a in done["actions"])
    merged = {(a["keep_id"], a["drop_id"]) for a in done["actions"] if a["action"] == "merge"}
    superseded = {(a["keep_id"], a["drop_id"]) for a in done["actions"] if a["action"] == "supersede"}
    assert merged == {(ids[older], ids[newer]) for _, older, newer in DUPLICATES}
    assert superseded == {(ids[newer], ids[older]) for _, older, newer in CHANGES}
    expected = (
        {older for _, older, _ in DUPLICATES} | {newer for _, _, newer in CHANGES} | {c for _, c in UNRELATED}
    )
    assert set(live) == expected
    # A merged note keeps the tags of the duplicate folded into it; unrelated notes are untouched.
    older, newer = DUPLICATES[0][1:]
    assert live[older]["tags"] == sorted([older[:20].strip(), newer[:20].strip()])
    assert after == before
    assert again["actions"] == []
