"""The embedded vector store's layout on disk: its Qdrant Edge configuration, how a shard is loaded
with it, and what an interrupted index build leaves behind."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import qdrant_edge as qe

from hybrid_memory.backends import _qdrant_common as common

logger = logging.getLogger(__name__)


def clear_interrupted_builds(temp_segments: Path) -> None:
    """Remove what index builds cut short (a killed exit, ``kill -9``, a power cut) left behind.

    Edge builds each optimized segment under ``temp_segments`` and moves it into place when
    done, so anything there at open belongs to a build that never finished; the caller holds
    the directory lock, so no build is running. Qdrant's server clears the same directory
    when it loads a shard; Edge does not.
    """
    try:
        leftovers = list(temp_segments.iterdir())
    except FileNotFoundError:
        return
    if not leftovers:
        return
    size = sum(_allocated(entry) for entry in leftovers)
    for entry in leftovers:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    logger.warning(
        "removed %d leftovers of interrupted index builds from %s (%.1f MB)",
        len(leftovers),
        temp_segments,
        size / 2**20,
    )


def _allocated(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (itself included), links not followed."""
    entries = [path, *path.rglob("*")] if path.is_dir() and not path.is_symlink() else [path]
    return sum(entry.lstat().st_blocks * 512 for entry in entries)


MAX_SEGMENT_KB = 50_000
"""An index build makes segments of at most this much vector data (~65k memories of float16): a
build maps every page of the segments it merges and writes (about 5 kB a memory) and holds its
new indexes beside the old, so what the process holds at its peak is bounded by this, however
large the store grows (at 200 MB, a 100k store's one build added 700 MB to the resting 300)."""
INDEXING_THRESHOLD_KB = 5_000
"""A segment gets its HNSW index past this much vector data: ~6,500 memories, as with Edge's
default (10 MB) when the vectors were float32."""


def edge_config(dimension: int, *, datatype: qe.VectorStorageDatatype | None = None) -> qe.EdgeConfig:
    """The store's layout: dense vectors kept on disk as float16, searched through an int8 copy
    in memory and rescored from disk; the keyword indexes in memory.

    ``datatype``: the dense vectors' storage type of a store made before float16 (float32).
    """
    dense = qe.EdgeVectorParams(
        size=dimension,
        distance=qe.Distance.Cosine,
        datatype=datatype or qe.VectorStorageDatatype.Float16,
        memory=qe.Memory.Cold,
        quantization_config=qe.ScalarQuantizationConfig(
            qe.ScalarType.Int8, quantile=0.99, memory=qe.Memory.Pinned
        ),
    )
    return qe.EdgeConfig(
        vectors={common.DENSE_VECTOR: dense},
        sparse_vectors={
            common.SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf),
            common.CONTEXT_SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf),
        },
        optimizers=qe.EdgeOptimizersConfig(
            max_segment_size=MAX_SEGMENT_KB, indexing_threshold=INDEXING_THRESHOLD_KB
        ),
    )


def payload_indexes() -> list[tuple[str, qe.KeywordIndexParams | qe.DatetimeIndexParams]]:
    """The payload indexes a new store gets, memory-mapped from disk (``Memory.Cold``): filters
    read them as they read the payloads, and in memory they took about 230 bytes a memory of the
    process's own (anonymous) memory, a quarter of all it held for a store. A store made before
    keeps its indexes in memory (an index's placement is fixed when it is created)."""
    return [
        *((name, qe.KeywordIndexParams(memory=qe.Memory.Cold)) for name in common.KEYWORD_INDEXES),
        *((name, qe.DatetimeIndexParams(memory=qe.Memory.Cold)) for name in common.DATETIME_INDEXES),
    ]


def load_shard(shard_path: Path, dimension: int) -> qe.EdgeShard:
    """Load with this version's layout; a store whose dense vectors are float32 (made before
    float16) keeps them so: Edge cannot change a stored vector type in place."""
    try:
        return qe.EdgeShard.load(str(shard_path), edge_config(dimension))
    except Exception as exc:
        if "datatype" not in str(exc):
            raise
    return qe.EdgeShard.load(
        str(shard_path), edge_config(dimension, datatype=qe.VectorStorageDatatype.Float32)
    )
