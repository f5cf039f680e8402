"""``hybrid-memory sync`` between two machines through a bare git repository, with the real command,
the real stores (Qdrant Edge, SQLite) and the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.e2e.claude_code import stop_hosts
from tests.e2e.sync_machines import Machine, bare, git, machine, remote_text, server
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

LAPTOP_FACT = "The ledger stores amounts as integer cents, never floats."
PRIVATE = "The vault door code is kept in the blue folder."
DESKTOP_FACT = "Invoices are numbered per fiscal year, restarting at one each April."


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[tuple[Machine, Machine, Path]]:
    laptop, desktop = machine(tmp_path, "laptop"), machine(tmp_path, "desktop")
    yield laptop, desktop, bare(tmp_path)
    for one in (laptop, desktop):
        stop_hosts(one.data_dir)


def test_a_session_captured_on_one_machine_is_recalled_on_the_other_both_ways(
    machines: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, remote = machines
    laptop.capture("11111111-aaaa-4000-8000-000000000001", [("user", LAPTOP_FACT), ("assistant", "Noted.")])
    laptop.sync(remote)
    desktop.sync(remote)  # in its own clone, at another path than the laptop's
    assert LAPTOP_FACT in desktop.recall("how does the ledger store amounts")

    desktop.capture(
        "22222222-bbbb-4000-8000-000000000002", [("user", DESKTOP_FACT), ("assistant", "Got it.")]
    )
    desktop.sync(remote)
    laptop.sync(remote)
    assert DESKTOP_FACT in laptop.recall("how are invoices numbered")

    before = laptop.counts(), desktop.counts()
    again = laptop.sync(remote), desktop.sync(remote), laptop.sync(remote)
    assert (laptop.counts(), desktop.counts()) == before
    assert before[0] == before[1]
    for line in again:
        assert "sent 0 memories, 0 notes, 0 links, 0 forgets" in line
        assert "0 memories, 0 notes, 0 links written" in line


async def test_forgets_supersedes_and_pins_reach_the_other_machine_and_private_notes_never_leave(
    machines: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, remote = machines
    with anyio.fail_after(300):
        async with Client(server(laptop)) as session:
            said = [
                {"role": "user", "id": "m1", "content": "The staging cluster runs in eu-west-1."},
                {"role": "user", "id": "m2", "content": "The old staging cluster in us-east-1 is gone."},
            ]
            await call(session, "remember_thread", thread_id="t1", messages=said)
            jenkins = await call(
                session, "create_note", content="Deploys go through Jenkins.", type="decision"
            )
            await call(session, "create_note", content=PRIVATE, type="fact", private=True)
            pinned = await call(
                session, "create_note", content="Always run migrations first.", type="decision"
            )
            await call(session, "pin_memory", memory_id=pinned["id"])
    await anyio.to_thread.run_sync(laptop.sync, remote)
    await anyio.to_thread.run_sync(desktop.sync, remote)
    there = {(i["item"], i.get("id")): i for i in await anyio.to_thread.run_sync(desktop.export)}
    assert ("note", jenkins["id"]) in there
    assert there[("memory", pinned["id"])]["pinned"] is True
    gone = next(m for m in there.values() if m.get("text") == said[1]["content"])

    with anyio.fail_after(300):
        async with Client(server(laptop)) as session:
            actions = await call(
                session, "create_note", content="Deploys go through GitHub Actions.", type="decision"
            )
            await call(
                session, "create_link", from_id=actions["id"], to_id=jenkins["id"], relation="supersedes"
            )
            await call(session, "forget", ids=[gone["id"]])
    await anyio.to_thread.run_sync(laptop.sync, remote)
    await anyio.to_thread.run_sync(desktop.sync, remote)

    exported = await anyio.to_thread.run_sync(desktop.export)
    there = {(i["item"], i.get("id")): i for i in exported}
    assert ("memory", gone["id"]) not in there
    assert there[("note", jenkins["id"])]["valid_to"] is not None
    links = [i for i in exported if i["item"] == "link"]
    assert {"from_id": actions["id"], "to_id": jenkins["id"], "relation": "supersedes"}.items() <= links[
        0
    ].items()
    assert PRIVATE not in str(there)
    assert PRIVATE not in await anyio.to_thread.run_sync(remote_text, remote)
    assert "Deploys go through Jenkins." in await anyio.to_thread.run_sync(remote_text, remote)


def test_memory_synced_before_the_clone_was_used_joins_it_at_the_next_sync_in_the_clone(
    machines: tuple[Machine, Machine, Path], tmp_path: Path
) -> None:
    laptop, desktop, remote = machines
    laptop.capture("33333333-cccc-4000-8000-000000000003", [("user", LAPTOP_FACT), ("assistant", "Noted.")])
    laptop.sync(remote)
    desktop.sync(remote, cwd=tmp_path)  # not in a clone: the memory waits under the repository's URL
    assert LAPTOP_FACT not in desktop.recall("how does the ledger store amounts")

    desktop.sync(remote)
    assert LAPTOP_FACT in desktop.recall("how does the ledger store amounts")


def test_a_sync_killed_half_way_is_finished_by_the_next_one(
    machines: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, remote = machines
    turns = [
        ("user" if n % 2 == 0 else "assistant", f"Step {n} of the migration moves table t{n}.")
        for n in range(120)
    ]
    laptop.capture("44444444-dddd-4000-8000-000000000004", turns)
    laptop.sync(remote)
    stop_hosts(desktop.data_dir)  # the command runs the sync itself, so killing it stops the sync
    killed = desktop.kill_sync_once_applying(remote)
    assert killed.applied_before_kill == {}  # stopped after the remote was read, before it was applied

    desktop.sync(remote)
    assert desktop.counts() == laptop.counts()
    assert "Step 7 of the migration moves table t7." in desktop.recall("which table does step 7 move")
    again = desktop.sync(remote)
    assert "sent 0 memories, 0 notes, 0 links, 0 forgets" in again
    assert "0 memories, 0 notes, 0 links written" in again


def test_with_a_sync_remote_set_a_session_that_ends_is_synced(
    machines: tuple[Machine, Machine, Path],
) -> None:
    laptop, desktop, remote = machines
    turns = [("user", LAPTOP_FACT), ("assistant", "Noted.")]
    said = laptop.end_session(
        "55555555-eeee-4000-8000-000000000005", turns, HYBRID_MEMORY_SYNC_REMOTE=str(remote)
    )
    assert "synced with" in said
    desktop.sync(remote)
    assert LAPTOP_FACT in desktop.recall("how does the ledger store amounts")


def test_without_a_sync_remote_a_session_that_ends_stays_on_its_machine(
    machines: tuple[Machine, Machine, Path],
) -> None:
    laptop, _, remote = machines
    laptop.end_session("66666666-ffff-4000-8000-000000000006", [("user", LAPTOP_FACT)])
    assert git(remote, "for-each-ref") == ""
