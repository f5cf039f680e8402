"""Which embedding model filled the configured vector store, read without opening it.

``hybrid-memory export`` must open the store with the model that filled it, whatever
model is configured now (an export is how a user moves to another model), so it asks
here first. The Edge store records the model in ``store.json``; a Qdrant collection in
its metadata (Qdrant 1.16+; older servers record only the dimension, in the vector
parameters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import anyio
from qdrant_client import AsyncQdrantClient

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.backends._store_dir import IDENTITY_FILE, read_identity
from hybrid_memory.backends.qdrant_edge import SHARD_DIR
from hybrid_memory.backends.qdrant_server import METADATA_KEY
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.settings import Settings


@dataclass(frozen=True)
class StoredEmbedding:
    """What filled a store: the dimension always, the model's name when it was recorded."""

    model: str | None
    dimension: int


async def stored_embedding(settings: Settings) -> StoredEmbedding | None:
    """The model and dimension of the configured vector store; None when it holds no store yet."""
    if settings.resolved_vector_backend == "qdrant":
        return await _collection_embedding(settings)
    path = settings.data_dir / "vectors"
    identity = read_identity(path / IDENTITY_FILE)
    if identity is not None:
        return StoredEmbedding(identity.model, identity.dimension)
    shard = path / SHARD_DIR
    if shard.is_dir() and any(shard.iterdir()):
        # A store older than store.json: opening it with the configured model records that.
        return StoredEmbedding(None, 0)
    return None


async def _collection_embedding(settings: Settings) -> StoredEmbedding | None:
    qdrant = settings.qdrant
    assert qdrant.url is not None  # the settings validator guarantees it
    api_key = qdrant.api_key.get_secret_value() if qdrant.api_key is not None else None
    timeout = max(1, math.ceil(qdrant.timeout_s))
    client = AsyncQdrantClient(url=qdrant.url, api_key=api_key, timeout=timeout, check_compatibility=False)
    try:
        with anyio.fail_after(qdrant.timeout_s):
            if not await client.collection_exists(qdrant.collection):
                return None
            info = await client.get_collection(qdrant.collection)
    except Exception as exc:  # any failure here means the same to the user: cannot read the store
        raise BackendUnavailableError(
            f"Could not read Qdrant collection '{qdrant.collection}' at {qdrant.url}: "
            f"{exc or type(exc).__name__}. Start Qdrant or fix QDRANT_URL / QDRANT_API_KEY."
        ) from exc
    finally:
        await client.close()
    recorded = common.StoreIdentity.from_json((info.config.metadata or {}).get(METADATA_KEY))
    if recorded is not None:
        return StoredEmbedding(recorded.model, recorded.dimension)
    vectors = info.config.params.vectors
    dense = vectors.get(common.DENSE_VECTOR) if isinstance(vectors, dict) else None
    return StoredEmbedding(None, dense.size if dense is not None else 0)
