"""A remembered turn that edited files says, in the recall tool's text, when they changed since."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from hybrid_memory import codestate
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.projects import root_uri
from hybrid_memory.server import build_server
from tests.conftest import make_settings
from tests.tools.helpers import call, call_error
from tests.tools.test_lifecycle import roots_of
from tests.unit.test_projects import git, repo

TURN = "Set the database pool size to 20 in src/db.py."


async def test_the_recall_tools_text_marks_files_changed_since_and_another_branch(
    tmp_path: Path, embedder: Embedder
) -> None:
    api = repo(tmp_path / "alice" / "api")
    (api / "src" / "db.py").write_text("POOL = 20\n")
    (api / "src" / "cache.py").write_text("TTL = 60\n")
    code = codestate.snapshot(api, ["src/db.py", "src/cache.py"])
    settings = make_settings(tmp_path / "data").model_copy(update={"project": None})
    server = build_server(settings, embedder=embedder)
    async with Client(server, list_roots_callback=roots_of(root_uri(api))) as client:
        message = {"role": "assistant", "content": TURN, "id": "a1", "code": code}
        await call(client, "remember_thread", thread_id="s1", messages=[message])
        bad = {"role": "assistant", "content": "x", "id": "a2", "code": {"files": "src/db.py"}}
        refused = await call_error(client, "remember_thread", thread_id="s1", messages=[bad])
        unchanged = await client.call_tool("recall_memory", {"query": "database pool size"})

        (api / "src" / "db.py").write_text("POOL = 35\n")
        git(api, "add", ".")
        git(api, "commit", "-q", "-m", "pool 35")
        changed = await client.call_tool("recall_memory", {"query": "database pool size"})
    git(api, "worktree", "add", "-q", "-b", "review", str(tmp_path / "alice" / "api-review"))
    review = tmp_path / "alice" / "api-review"
    async with Client(server, list_roots_callback=roots_of(root_uri(review))) as elsewhere:
        other_branch = await client_text(elsewhere)

    assert "messages[0].code is not valid" in refused
    assert unchanged.structured_content is not None
    assert unchanged.structured_content["results"][0]["changed"] == []
    assert "changed since" not in text_of(unchanged)
    assert changed.structured_content is not None
    assert changed.structured_content["results"][0]["changed"] == ["src/db.py"]
    assert f"{TURN} (src/db.py changed since)" in text_of(changed)
    assert f"{TURN} (src/db.py changed since; made on branch main)" in other_branch


def text_of(result: object) -> str:
    return "".join(getattr(block, "text", "") for block in getattr(result, "content", []))


async def client_text(client: Client) -> str:
    return text_of(await client.call_tool("recall_memory", {"query": "database pool size"}))
