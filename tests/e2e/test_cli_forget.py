"""``hybrid-memory forget --project NAME`` while a server holds the store: the project is gone, no other."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from mcp import Client

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MessageIn, Scope
from hybrid_memory.server.app import open_app
from hybrid_memory.service import ThreadDraft
from tests.conftest import make_settings
from tests.e2e.cli_runs import hybrid_memory
from tests.e2e.many_clients import stdio_params
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

SAID = [{"role": "user", "id": "m1", "content": "The boiler in the cellar is serviced every March."}]


async def test_forget_a_project_through_the_running_server_leaves_the_other_projects(
    tmp_path: Path, embedder: Embedder
) -> None:
    data = tmp_path / "data"
    async with open_app(make_settings(data).model_copy(update={"project": "garden"}), embedder) as app:
        roses = [MessageIn(role="user", content="The roses are pruned in February.", id="r1")]
        await app.service.remember_thread(Scope(project="garden"), ThreadDraft("roses", roses))
    # What earlier versions' hooks kept beside the store (offsets, what was said, last sessions): the
    # host drops it when it starts, unread.
    for folder in ("capture", "said", "sessions"):
        (data / "hooks" / folder).mkdir(parents=True)
        earlier = data / "hooks" / folder / "e2e-0a1b2c3d.json"
        earlier.write_text('{"first": "When is the boiler serviced?"}')
    with anyio.fail_after(300):
        async with Client(stdio_params(data)) as house:
            await call(house, "remember_thread", thread_id="house", messages=SAID)
            await call(house, "create_note", content="The boiler is serviced in March.", type="fact")

            done = await anyio.to_thread.run_sync(lambda: hybrid_memory(data, "forget", "--project", "e2e"))

            assert (done.code, done.stderr) == (0, "")
            # The message, the note's searchable copy, and what the service derived from them.
            assert re.fullmatch(
                r"project e2e: forgot \d+ memories and 1 notes \(with their links\)\n", done.stdout
            )
            assert (await call(house, "list_threads"))["threads"] == []
            gone = await anyio.to_thread.run_sync(lambda: hybrid_memory(data, "stats", "--project", "e2e"))
            kept = await anyio.to_thread.run_sync(lambda: hybrid_memory(data, "stats", "--project", "garden"))
    assert json.loads(gone.stdout)["items"] == 0
    assert json.loads(kept.stdout)["items"] == 1
    assert [p for p in (data / "hooks").rglob("*") if p.is_file()] == []


def test_forget_names_no_project_by_default(tmp_path: Path) -> None:
    refused = hybrid_memory(tmp_path / "data", "forget")
    assert refused.code == 2
    assert refused.stderr.splitlines()[-1] == (
        "hybrid-memory forget: error: the following arguments are required: --project"
    )
