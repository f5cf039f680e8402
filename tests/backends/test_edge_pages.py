"""The Edge store lets go of the file pages it mapped (after an index build, on open, during a long
ingest) without losing a byte: its shared mappings keep their contents, nothing else is touched."""

from __future__ import annotations

import json
import mmap
import sys
from pathlib import Path

import pytest

from hybrid_memory.backends._edge_host import SEGMENTS_DIR, SHARD_DIR
from hybrid_memory.backends._process_memory import release_mapped_pages
from hybrid_memory.backends._qdrant_common import DATETIME_INDEXES, KEYWORD_INDEXES
from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
from hybrid_memory.models import MemoryFilter, MemoryRecord, Scope
from tests.backends.build_and_die import DIMENSION, records
from tests.contract.test_vector_store import ALPHA, MODEL, scoped

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/smaps")

PAGES = 64


def resident_kb(directory: Path) -> int:
    """This process's resident kB of its mappings of files under ``directory``."""
    prefix, total, inside = f"{directory.resolve()}/", 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            head = line.split(maxsplit=5)
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                inside = len(head) == 6 and head[5].startswith(prefix)
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


def test_a_shared_mapping_is_let_go_and_keeps_what_was_written(tmp_path: Path) -> None:
    path = tmp_path / "data"
    path.write_bytes(bytes(PAGES * mmap.PAGESIZE))
    with path.open("r+b") as file, mmap.mmap(file.fileno(), 0) as mapped:
        for page in range(PAGES):  # written through the map, never synced
            mapped[page * mmap.PAGESIZE] = page + 1
        assert resident_kb(tmp_path) == PAGES * mmap.PAGESIZE // 1024

        assert release_mapped_pages(tmp_path) == PAGES * mmap.PAGESIZE

        assert resident_kb(tmp_path) == 0
        assert [mapped[page * mmap.PAGESIZE] for page in range(PAGES)] == list(range(1, PAGES + 1))
    assert path.read_bytes()[mmap.PAGESIZE * 3] == 4


def test_a_private_mapping_and_files_elsewhere_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    private, elsewhere = tmp_path / "store" / "private", tmp_path / "elsewhere"
    for path in (private, elsewhere):
        path.write_bytes(bytes(PAGES * mmap.PAGESIZE))
    with (
        private.open("r+b") as a,
        mmap.mmap(a.fileno(), 0, flags=mmap.MAP_PRIVATE) as copy,
        elsewhere.open("r+b") as b,
        mmap.mmap(b.fileno(), 0) as shared,
    ):
        copy[0], shared[0] = 7, 9

        assert release_mapped_pages(tmp_path / "store") == 0

        assert (copy[0], shared[0]) == (7, 9)  # a private page dropped would read back as the file's 0
        assert resident_kb(tmp_path / "store") > 0
        assert resident_kb(tmp_path) > resident_kb(tmp_path / "store")


async def open_store(tmp_path: Path) -> tuple[EdgeVectorStore, Path]:
    """A new store in ``tmp_path`` and its segments' directory."""
    store = EdgeVectorStore(tmp_path / "vectors", timeout_s=120)
    await store.open(dimension=DIMENSION, model=MODEL)
    return store, tmp_path / "vectors" / SHARD_DIR / SEGMENTS_DIR


async def write_past_the_indexing_threshold(store: EdgeVectorStore) -> list[MemoryRecord]:
    """8,000 memories: the next optimize builds an HNSW segment of them."""
    written = records(0, 8000)
    for start in range(0, len(written), 500):
        await store.upsert(written[start : start + 500])
    return written


async def test_after_an_index_build_the_store_holds_none_of_its_segment_pages_and_reads_the_same(
    tmp_path: Path,
) -> None:
    store, segments = await open_store(tmp_path)
    try:
        written = await write_past_the_indexing_threshold(store)
        flt = scoped()
        query = written[17].dense
        before = [hit.memory.id for hit in await store.search_dense(query, flt, 10)]
        resident = resident_kb(segments)
        assert resident > 1024  # what was written since the last 5,000 and searched

        assert await store.optimize()

        # The build mapped all 8,000 memories' pages; a background flush may map back a few.
        assert resident_kb(segments) < resident // 8
        after = [hit.memory.id for hit in await store.search_dense(query, flt, 10)]
        assert after[0] == written[17].memory.id
        assert len(set(before) & set(after)) >= 8  # the index approximates the exhaustive search
        assert await store.count(flt) == 8000
    finally:
        await store.close()


async def test_an_indexed_store_reads_its_payload_indexes_from_disk_and_filters_by_them(
    tmp_path: Path,
) -> None:
    # In memory they were about 230 bytes a memory of the process's own memory, a quarter of a store's.
    store, segments = await open_store(tmp_path)
    try:
        written = await write_past_the_indexing_threshold(store)
        assert await store.optimize()

        configs = [json.loads(p.read_text()) for p in segments.glob("*/payload_index/config.json")]
        assert configs
        placements = {name: field["memory"] for c in configs for name, field in c["indexed_fields"].items()}
        assert set(placements) == {*KEYWORD_INDEXES, *DATETIME_INDEXES}
        assert set(placements.values()) == {"cold"}
        assert await store.count(scoped()) == 8000
        assert await store.count(MemoryFilter(scope=Scope(project="elsewhere"))) == 0
        wanted = [written[k].memory.id for k in (3, 4100, 7999)]
        assert sorted(m.id for m in await store.get(ALPHA, wanted)) == sorted(wanted)
    finally:
        await store.close()
