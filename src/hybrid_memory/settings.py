"""Settings: one pydantic-settings tree, built once at start-up and passed down.

Nothing here is read at import time; :func:`load_settings` reads the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("mcp-hybrid-memory", appauthor=False))


class EmbeddingSettings(BaseSettings):
    """``HYBRID_MEMORY_EMBEDDING_*``: which model turns text into vectors."""

    model_config = SettingsConfigDict(
        env_prefix="HYBRID_MEMORY_EMBEDDING_", extra="ignore", populate_by_name=True
    )

    provider: Literal["fastembed", "openai"] = "fastembed"
    model: str = DEFAULT_MODEL
    model_path: Path | None = None
    """A local directory holding the ONNX model (offline use); fastembed downloads by name otherwise."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (Ollama: http://localhost:11434/v1)."""
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("HYBRID_MEMORY_EMBEDDING_API_KEY", "OPENAI_API_KEY")
    )
    dimension: int | None = Field(default=None, ge=1)
    """Required for the openai provider with a model whose dimension is not known in advance."""
    threads: int = Field(default=1, ge=1)
    batch_size: int = Field(default=8, ge=1)
    """Texts per model call. Small batches of like length waste little on padding (8: fastest here)."""
    timeout_s: float = Field(default=30.0, gt=0)

    @model_validator(mode="after")
    def _check_provider(self) -> Self:
        if self.provider == "fastembed" and self.model_path is not None and not self.model_path.is_dir():
            raise ValueError(f"HYBRID_MEMORY_EMBEDDING_MODEL_PATH={self.model_path} is not a directory")
        return self


class QdrantSettings(BaseSettings):
    """``QDRANT_URL`` / ``QDRANT_API_KEY`` select and reach a Qdrant server."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    url: str | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_URL", "HYBRID_MEMORY_QDRANT_URL")
    )
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_API_KEY", "HYBRID_MEMORY_QDRANT_API_KEY")
    )
    collection: str = Field(default="hybrid_memory", validation_alias="HYBRID_MEMORY_QDRANT_COLLECTION")
    timeout_s: float = Field(default=10.0, gt=0, validation_alias="HYBRID_MEMORY_QDRANT_TIMEOUT")


class Neo4jSettings(BaseSettings):
    """``NEO4J_URI`` and friends select and reach a Neo4j server."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    uri: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_URI", "HYBRID_MEMORY_NEO4J_URI")
    )
    user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER", "NEO4J_USERNAME"))
    password: SecretStr | None = Field(default=None, validation_alias="NEO4J_PASSWORD")
    database: str | None = Field(default=None, validation_alias="NEO4J_DATABASE")
    timeout_s: float = Field(default=10.0, gt=0, validation_alias="HYBRID_MEMORY_NEO4J_TIMEOUT")
    dialect: Literal["neo4j", "arcadedb"] = Field(
        default="neo4j", validation_alias="HYBRID_MEMORY_NEO4J_DIALECT"
    )
    """``arcadedb`` for ArcadeDB's Bolt server, whose Cypher differs in a few places (see the README)."""


class RankingSettings(BaseSettings):
    """``HYBRID_MEMORY_RANKING_*``: how the hybrid ranker weighs what the channels return."""

    model_config = SettingsConfigDict(env_prefix="HYBRID_MEMORY_RANKING_", extra="ignore")

    # The final mix. Relevance dominates: with recency at 0.3 a question about something
    # said three months ago lost a third of its evidence (LoCoMo, live clock, R@10 .72 -> .63).
    relevance_weight: float = Field(default=0.8, ge=0)
    recency_weight: float = Field(default=0.1, ge=0)
    importance_weight: float = Field(default=0.1, ge=0)
    recency_half_life_days: float = Field(default=30.0, gt=0)

    fusion: Literal["score", "rrf"] = "score"
    """``score``: weighted sum of min-max normalised channel scores; ``rrf``: reciprocal-rank fusion."""
    rrf_k: int = Field(default=60, ge=1)
    keyword_weight: float = Field(default=0.35, ge=0)
    """BM25 over a memory's own text."""
    context_weight: float = Field(default=0.35, ge=0)
    """BM25 over a memory's text with the message before it."""
    dense_weight: float = Field(default=0.3, ge=0)
    graph_weight: float = Field(default=0.35, ge=0)
    """Full-text search over notes in the graph store."""
    neighbour_weight: float = Field(default=0.15, ge=0)
    """Notes linked to the best note hits."""
    adjacent_share: float = Field(default=0.6, ge=0, le=1)
    """The turns next to a top hit inherit this share of its relevance (0 turns it off)."""
    adjacent_top: int = Field(default=5, ge=0, le=50)
    """How many top hits lend relevance to their neighbouring turns."""
    candidates: int = Field(default=50, ge=1, le=1000)
    """How many candidates each channel contributes before fusion."""

    def channel_weights(self) -> dict[str, float]:
        return {
            "keyword": self.keyword_weight,
            "context": self.context_weight,
            "dense": self.dense_weight,
            "graph": self.graph_weight,
            "neighbour": self.neighbour_weight,
        }


class LifecycleSettings(BaseSettings):
    """Limits, eviction, retention and summaries; applied to each project separately.

    ``HYBRID_MEMORY_MAX_ITEMS``, ``_MAX_TOKENS``, ``_TTL_DAYS``, ``_EVICTION_POLICY``,
    ``_SUMMARIZE_ON_EVICT``, ``_RETENTION_DAYS``, ``_SUMMARY_MODEL``, ``_SUMMARY_BASE_URL``,
    ``_SUMMARY_API_KEY``, ``_SUMMARY_TIMEOUT_S``.
    """

    model_config = SettingsConfigDict(env_prefix="HYBRID_MEMORY_", extra="ignore")

    max_items: int | None = Field(default=None, ge=1)
    """Most memories (messages, notes, summaries, tasks) a project keeps; None: no limit."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens (embedding-model tokens) a project's memories hold together; None: no limit."""
    ttl_days: float | None = Field(default=None, gt=0)
    """With eviction_policy=ttl: memories older than this are evicted."""
    eviction_policy: Literal["lru", "fifo", "ttl"] = "lru"
    """Which memories go first when over a limit: least recently used, oldest, or expired then oldest."""
    summarize_on_evict: bool = True
    """Replace evicted memories by one summary memory instead of dropping them."""
    retention_days: float | None = Field(default=None, gt=0)
    """Memories older than this are deleted by the cleanup pass (pinned ones are spared)."""
    summary_model: str | None = None
    """An OpenAI-compatible chat model for eviction summaries when the client cannot sample."""
    summary_base_url: str | None = None
    """Its endpoint (Ollama: http://localhost:11434/v1); unset: OpenAI's."""
    summary_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("HYBRID_MEMORY_SUMMARY_API_KEY", "OPENAI_API_KEY")
    )
    summary_timeout_s: float = Field(default=30.0, gt=0)
    """The longest a summary request may take; then the extractive summary is used."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.eviction_policy == "ttl" and self.ttl_days is None:
            raise ValueError("HYBRID_MEMORY_EVICTION_POLICY=ttl needs HYBRID_MEMORY_TTL_DAYS")
        if self.summary_base_url is not None and self.summary_model is None:
            raise ValueError("HYBRID_MEMORY_SUMMARY_BASE_URL needs HYBRID_MEMORY_SUMMARY_MODEL")
        if self.summary_model is not None and self.summary_base_url is None and self.summary_api_key is None:
            raise ValueError(
                "HYBRID_MEMORY_SUMMARY_MODEL without HYBRID_MEMORY_SUMMARY_BASE_URL uses OpenAI, which needs "
                "HYBRID_MEMORY_SUMMARY_API_KEY or OPENAI_API_KEY"
            )
        return self

    @property
    def limited(self) -> bool:
        return self.max_items is not None or self.max_tokens is not None or self.ttl_days is not None


class Settings(BaseSettings):
    """``HYBRID_MEMORY_*``: the whole configuration."""

    model_config = SettingsConfigDict(env_prefix="HYBRID_MEMORY_", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir)
    project: str | None = None
    """Project scope; when unset, the client's first MCP root names it, else ``default``."""
    user: str = "default"
    vector_backend: Literal["edge", "qdrant"] | None = None
    """None: ``qdrant`` when QDRANT_URL is set, else the embedded ``edge``."""
    graph_backend: Literal["sqlite", "neo4j"] | None = None
    """None: ``neo4j`` when NEO4J_URI is set, else the embedded ``sqlite``."""
    chunk_tokens: int = Field(default=256, ge=16, le=8192)
    chunk_overlap_tokens: int = Field(default=32, ge=0)
    max_content_chars: int = Field(default=100_000, ge=1)
    max_messages: int = Field(default=2_000, ge=1)
    backend_timeout_s: float = Field(default=10.0, gt=0)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    tools: Literal["all", "core"] = "all"
    """``core``: recall_memory, read_memory, remember_thread, create_note, create_link, get_linked_notes."""

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    ranking: RankingSettings = Field(default_factory=RankingSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.chunk_overlap_tokens >= self.chunk_tokens:
            raise ValueError(
                "HYBRID_MEMORY_CHUNK_OVERLAP_TOKENS must be smaller than HYBRID_MEMORY_CHUNK_TOKENS"
            )
        if self.resolved_vector_backend == "qdrant" and not self.qdrant.url:
            raise ValueError("HYBRID_MEMORY_VECTOR_BACKEND=qdrant needs QDRANT_URL")
        if self.resolved_graph_backend == "neo4j" and not self.neo4j.uri:
            raise ValueError("HYBRID_MEMORY_GRAPH_BACKEND=neo4j needs NEO4J_URI")
        return self

    @property
    def resolved_vector_backend(self) -> Literal["edge", "qdrant"]:
        if self.vector_backend is not None:
            return self.vector_backend
        return "qdrant" if self.qdrant.url else "edge"

    @property
    def resolved_graph_backend(self) -> Literal["sqlite", "neo4j"]:
        if self.graph_backend is not None:
            return self.graph_backend
        return "neo4j" if self.neo4j.uri else "sqlite"


def load_settings(**overrides: object) -> Settings:
    """Read the environment once; ``overrides`` win (the CLI's flags)."""
    return Settings(**overrides)  # type: ignore[arg-type]
