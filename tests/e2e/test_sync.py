"""``hybrid-memory sync`` between two machines through a bare git repository, with the real command,
the real stores (Qdrant Edge, SQLite) and the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.claude_code import stop_hosts
from tests.e2e.sync_machines import Machine, bare, machine

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

LAPTOP_FACT = "The ledger stores amounts as integer cents, never floats."
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
    desktop.sync(remote)
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
