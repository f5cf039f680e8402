"""The connection to a Qdrant server collection: open and check it, bound every call, map errors."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

import anyio
import httpx
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import ApiException, ResponseHandlingException, UnexpectedResponse

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.errors import BackendError, BackendUnavailableError, ConflictError

logger = logging.getLogger(__name__)

T = TypeVar("T")

METADATA_KEY = "hybrid_memory"
_METADATA_SINCE = (1, 16)
_UNAVAILABLE_STATUSES = frozenset({502, 503, 504})


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.lstrip("v").split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


class ServerCollection:
    """The connection to collection ``collection`` of the Qdrant server at ``url``: opening and
    checking it, and every call bounded and its errors mapped.

    Every call is bounded by ``timeout_s``; a server that cannot be reached raises
    ``BackendUnavailableError``, any other failure ``BackendError``.
    """

    def __init__(self, url: str, api_key: str | None, collection: str, *, timeout_s: float) -> None:
        self._url = url
        self._api_key = api_key
        self.name = collection
        self._timeout_s = timeout_s
        self._client: AsyncQdrantClient | None = None

    # --- lifecycle --------------------------------------------------------------------------------

    async def open(self, *, dimension: int, model: str) -> None:
        """Connect; create the collection and its payload indexes if missing; check the model.

        Raises ``BackendUnavailableError`` when the server does not answer and
        ``ConflictError`` when the collection holds another model's vectors.
        """
        if self._client is not None:
            raise RuntimeError("the Qdrant server store is already open")
        # check_compatibility would probe the server from a thread in the constructor
        # and only warn; the version is asked for below, inside the timeout.
        client = AsyncQdrantClient(
            url=self._url,
            api_key=self._api_key,
            timeout=max(1, math.ceil(self._timeout_s)),
            check_compatibility=False,
        )
        self._client = client
        try:
            version = await self.call(client.info)
            await self._prepare(
                common.StoreIdentity(model, dimension), _version(version.version) >= _METADATA_SINCE
            )
        except BaseException:
            self._client = None
            with anyio.CancelScope(shield=True):
                await client.close()
            raise

    async def close(self) -> None:
        """Close the connection pool."""
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True):
                await client.close()

    async def _prepare(self, wanted: common.StoreIdentity, metadata_supported: bool) -> None:
        client, name = self.client(), self.name
        metadata = {METADATA_KEY: wanted.to_json()} if metadata_supported else None

        async def create() -> None:
            try:
                await client.create_collection(
                    name,
                    vectors_config={
                        common.DENSE_VECTOR: models.VectorParams(
                            size=wanted.dimension, distance=models.Distance.COSINE
                        )
                    },
                    sparse_vectors_config={
                        common.SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF),
                        common.CONTEXT_SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF),
                    },
                    metadata=metadata,
                )
            except UnexpectedResponse as exc:
                if exc.status_code != 409:  # 409: another server created it meanwhile; checked below
                    raise

        if not await self.call(lambda: client.collection_exists(name)):
            await self.call(create)
        info = await self.call(lambda: client.get_collection(name))
        recorded = self._check_collection(info, wanted)
        if recorded is None and metadata is not None:
            logger.info(
                "recording model %s (dimension %d) on collection %s", wanted.model, wanted.dimension, name
            )
            await self.call(lambda: client.update_collection(name, metadata=metadata))
        indexed = info.payload_schema or {}
        schemas = [(f, models.PayloadSchemaType.KEYWORD) for f in common.KEYWORD_INDEXES]
        schemas += [(f, models.PayloadSchemaType.DATETIME) for f in common.DATETIME_INDEXES]
        for field, schema in schemas:
            if field not in indexed:
                await self.call(
                    partial(client.create_payload_index, name, field, field_schema=schema, wait=True)
                )

    def _check_collection(
        self, info: models.CollectionInfo, wanted: common.StoreIdentity
    ) -> common.StoreIdentity | None:
        """Raise ``ConflictError`` unless the collection fits; returns the identity it records."""
        where = f"in Qdrant collection '{self.name}' at {self._url}"
        elsewhere = "set HYBRID_MEMORY_QDRANT_COLLECTION to another collection"
        params = info.config.params
        dense = params.vectors.get(common.DENSE_VECTOR) if isinstance(params.vectors, dict) else None
        sparse = [
            (params.sparse_vectors or {}).get(name)
            for name in (common.SPARSE_VECTOR, common.CONTEXT_SPARSE_VECTOR)
        ]
        if (
            dense is None
            or dense.distance != models.Distance.COSINE
            or any(s is None or s.modifier != models.Modifier.IDF for s in sparse)
        ):
            raise ConflictError(
                f"The Qdrant collection '{self.name}' at {self._url} was not made by hybrid-memory: "
                f"it needs a cosine vector '{common.DENSE_VECTOR}' and sparse vectors "
                f"'{common.SPARSE_VECTOR}' and '{common.CONTEXT_SPARSE_VECTOR}' with the IDF modifier; "
                f"{elsewhere}."
            )
        recorded = common.StoreIdentity.from_json((info.config.metadata or {}).get(METADATA_KEY))
        if recorded is not None:
            common.check_identity(recorded, wanted, store=where, elsewhere=elsewhere)
        if dense.size != wanted.dimension:
            actual = common.StoreIdentity(recorded.model if recorded else "(not recorded)", dense.size)
            common.check_identity(actual, wanted, store=where, elsewhere=elsewhere)
        return recorded

    # --- every server call goes through here ------------------------------------------------------

    def client(self) -> AsyncQdrantClient:
        if self._client is None:
            raise RuntimeError("QdrantServerVectorStore is not open; call open() first")
        return self._client

    def _unavailable(self, reason: str) -> BackendUnavailableError:
        return BackendUnavailableError(
            f"Qdrant at {self._url} did not answer within {self._timeout_s:g}s: {reason}. "
            "Start it or fix QDRANT_URL."
        )

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            with anyio.fail_after(self._timeout_s):
                return await fn()
        except TimeoutError as exc:
            raise self._unavailable("no answer") from exc
        except ResponseHandlingException as exc:
            # qdrant-client wraps httpx's transport errors (refused, reset, timed out) in this.
            if isinstance(exc.source, httpx.TransportError):
                raise self._unavailable(str(exc.source) or type(exc.source).__name__) from exc
            raise BackendError(
                f"Qdrant at {self._url} sent an answer that could not be read: {exc.source}"
            ) from exc
        except httpx.TransportError as exc:
            raise self._unavailable(str(exc) or type(exc).__name__) from exc
        except UnexpectedResponse as exc:
            if exc.status_code in _UNAVAILABLE_STATUSES:
                raise self._unavailable(f"HTTP {exc.status_code} {exc.reason_phrase}") from exc
            raise BackendError(self._describe(exc)) from exc
        except ApiException as exc:
            raise BackendError(f"Qdrant at {self._url} failed: {exc}") from exc

    def _describe(self, exc: UnexpectedResponse) -> str:
        try:
            detail = str(exc.structured()["status"]["error"])
        except (ValueError, KeyError, TypeError):
            detail = exc.content.decode(errors="replace")[:200]
        hint = " Check QDRANT_API_KEY." if exc.status_code in (401, 403) else ""
        return (
            f"Qdrant at {self._url} refused a request on collection '{self.name}' "
            f"(HTTP {exc.status_code} {exc.reason_phrase}): {detail}.{hint}"
        )
