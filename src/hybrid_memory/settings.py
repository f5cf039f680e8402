"""Settings: one pydantic-settings tree, built once at start-up and passed down.

Nothing here is read at import time; :func:`load_settings` reads the environment.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import AliasChoices, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from hybrid_memory.host.lock import default_data_dir

PACKAGED_MODEL = "all-MiniLM-L6-v2-int8"
"""The default model: int8 all-MiniLM-L6-v2 inside the package, used offline with no download."""
PACKAGED_MODEL_DIR = Path(__file__).resolve().parent / "embeddings" / "model"
"""Where the packaged model's files are (its README says how they were built)."""
FP32_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""The same model in fp32: what a model directory holds when no model is named."""
DEFAULT_MODEL = PACKAGED_MODEL


class EmbeddingSettings(BaseSettings):
    """``HYBRID_MEMORY_EMBEDDING_*``: which model turns text into vectors."""

    model_config = SettingsConfigDict(
        env_prefix="HYBRID_MEMORY_EMBEDDING_",
        extra="ignore",
        populate_by_name=True,
        use_attribute_docstrings=True,
    )

    provider: Literal["fastembed", "openai"] = "fastembed"
    """``fastembed``: a local ONNX model (the packaged one by default); ``openai``: any OpenAI-compatible
    embeddings API."""
    model: str = DEFAULT_MODEL
    """The packaged int8 model by default; any fastembed model by name (downloaded when first used)."""
    model_path: Path | None = None
    """A local directory holding the ONNX model; alone (no model named) it is taken for the fp32
    all-MiniLM-L6-v2 export, unless it is the packaged model's own directory. Unset: the packaged
    model, or fastembed downloads the named one."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (Ollama: http://localhost:11434/v1)."""
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("HYBRID_MEMORY_EMBEDDING_API_KEY", "OPENAI_API_KEY")
    )
    """The key for the openai provider (not needed by a local server such as Ollama)."""
    dimension: int | None = Field(default=None, ge=1)
    """Required for the openai provider with a model whose dimension is not known in advance."""
    threads: int = Field(default=1, ge=1)
    """ONNX runtime threads of the local model."""
    batch_size: int | None = Field(default=None, ge=1)
    """Texts per model call; unset: 8, but 1 for the packaged int8 model.

    Small batches of like length waste little on padding. The packaged int8 model quantizes its
    activations per call, so a text's vector would depend on the texts batched with it, and the
    same memory would embed differently depending on how it arrived (remember_thread, import, a
    repair)."""
    timeout_s: float = Field(default=30.0, gt=0)
    """The longest one openai embedding request may take, in seconds."""

    @model_validator(mode="after")
    def _check_provider(self) -> Self:
        if self.provider == "fastembed" and self.model_path is not None and not self.model_path.is_dir():
            raise ValueError(f"HYBRID_MEMORY_EMBEDDING_MODEL_PATH={self.model_path} is not a directory")
        path = self.model_path
        if self.provider == "fastembed" and path is not None and "model" not in self.model_fields_set:
            # Before the packaged model, a bare model directory meant the fp32 export:
            # keep that meaning, and the name its stores were filled under.
            self.model = PACKAGED_MODEL if path.resolve() == PACKAGED_MODEL_DIR else FP32_MODEL
        return self

    @property
    def texts_per_call(self) -> int:
        """``batch_size``, else its default for the model (see there)."""
        if self.batch_size is not None:
            return self.batch_size
        return 1 if self.provider == "fastembed" and self.model == PACKAGED_MODEL else 8


class QdrantSettings(BaseSettings):
    """``QDRANT_URL`` / ``QDRANT_API_KEY`` select and reach a Qdrant server."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, use_attribute_docstrings=True)

    url: str | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_URL", "HYBRID_MEMORY_QDRANT_URL")
    )
    """A Qdrant server or cluster to keep memories in (``http://localhost:6333``); unset: the embedded Qdrant
    Edge."""
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_API_KEY", "HYBRID_MEMORY_QDRANT_API_KEY")
    )
    """The Qdrant server's API key, if it asks for one."""
    collection: str = Field(default="hybrid_memory", validation_alias="HYBRID_MEMORY_QDRANT_COLLECTION")
    """The collection that holds the memories in a Qdrant server."""
    timeout_s: float = Field(default=10.0, gt=0, validation_alias="HYBRID_MEMORY_QDRANT_TIMEOUT")
    """Seconds before a Qdrant server counts as unreachable."""


class Neo4jSettings(BaseSettings):
    """``NEO4J_URI`` and friends select and reach a Neo4j server."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, use_attribute_docstrings=True)

    uri: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_URI", "HYBRID_MEMORY_NEO4J_URI")
    )
    """A Neo4j server to keep the note graph in (``bolt://localhost:7687``); unset: the embedded SQLite
    graph."""
    user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER", "NEO4J_USERNAME"))
    """The Neo4j user."""
    password: SecretStr | None = Field(default=None, validation_alias="NEO4J_PASSWORD")
    """The Neo4j user's password."""
    database: str | None = Field(default=None, validation_alias="NEO4J_DATABASE")
    """The Neo4j database; unset: the server's home database."""
    timeout_s: float = Field(default=10.0, gt=0, validation_alias="HYBRID_MEMORY_NEO4J_TIMEOUT")
    """Seconds before a Neo4j server counts as unreachable."""
    dialect: Literal["neo4j", "arcadedb"] = Field(
        default="neo4j", validation_alias="HYBRID_MEMORY_NEO4J_DIALECT"
    )
    """``arcadedb`` for ArcadeDB's Bolt server, whose Cypher differs in a few places (docs/arcadedb-
    differences.md)."""


class RankingSettings(BaseSettings):
    """``HYBRID_MEMORY_RANKING_*``: how the hybrid ranker weighs what the channels return."""

    model_config = SettingsConfigDict(
        env_prefix="HYBRID_MEMORY_RANKING_", extra="ignore", use_attribute_docstrings=True
    )

    preset: Literal["hybrid", "keyword", "dense", "rrf", "calibrated"] = "hybrid"
    """The named recall configuration; each field below that is set overrides its part of it."""

    # The final mix. Relevance dominates: with recency at 0.3 a question about something
    # said three months ago lost a third of its evidence (LoCoMo, live clock, R@10 .72 -> .63).
    relevance_weight: float = Field(default=0.8, ge=0)
    """Share of a hit's final score that comes from its fused relevance."""
    recency_weight: float = Field(default=0.1, ge=0)
    """Share of the final score that comes from recency (newer scores higher)."""
    importance_weight: float = Field(default=0.1, ge=0)
    """Share of the final score that comes from a memory's importance."""
    recency_half_life_days: float = Field(default=30.0, gt=0)
    """Recency halves every this many days."""

    fusion: Literal["score", "rrf", "calibrated"] = "score"
    """``score``: weighted sum of min-max normalised channel scores; ``rrf``: reciprocal-rank fusion;
    ``calibrated``: raw scores through fixed maps, so a score means the same in every query."""
    rrf_k: int = Field(default=60, ge=1)
    """The k of reciprocal-rank fusion (used with ``fusion=rrf``)."""
    own_words_first: bool = True
    """A turn that matched through the turn before it stays below that turn."""
    keyword_weight: float = Field(default=0.35, ge=0)
    """BM25 over a memory's own text."""
    context_weight: float = Field(default=0.35, ge=0)
    """BM25 over a memory's text with the message before it."""
    dense_weight: float = Field(default=0.3, ge=0)
    """Cosine similarity of the query's vector and a memory's (its text with the tail of the message before
    it)."""
    graph_weight: float = Field(default=0.35, ge=0)
    """Full-text search over notes in the graph store."""
    neighbour_weight: float = Field(default=0.3, ge=0)
    """Notes linked to the best note hits gain this share of a hit's relevance per unit of link strength."""
    adjacent_share: float = Field(default=0.0, ge=0, le=1)
    """The turns next to a top hit inherit this share of its relevance and rank on their own (0: off,
    the hit carries them as context instead)."""
    adjacent_top: int = Field(default=5, ge=0, le=50)
    """How many top hits lend relevance to their neighbouring turns."""
    candidates: int = Field(default=50, ge=1, le=1000)
    """How many candidates each channel contributes before fusion."""
    feedback: float = Field(default=0.0, ge=0, le=1)
    """Keyword feedback: the best hits' words join the query at this weight for a second keyword search
    (0: off; it costs a second store round, see docs/recall.md).

    About 5 ms a query at 700 memories, 11 ms at 10k."""
    speakers: float = Field(default=0.5, ge=0, le=1)
    """Relevance kept by turns of the speaker a query does not ask about: a first-person question
    ("what is my sister allergic to?") asks for the user's own turns, one about the assistant's words
    ("what did you recommend?") for the assistant's (1: off)."""
    strong_match: float = Field(default=0.4, ge=0, le=1)
    """Hits whose ``match`` is below this are marked weak (probably unrelated) in the text the model reads."""


class LifecycleSettings(BaseSettings):
    """Limits, eviction, retention and summaries; applied to each project separately.

    ``HYBRID_MEMORY_MAX_ITEMS``, ``_MAX_TOKENS``, ``_TTL_DAYS``, ``_EVICTION_POLICY``,
    ``_SUMMARIZE_ON_EVICT``, ``_RETENTION_DAYS``, ``_SUMMARY_MODEL``, ``_SUMMARY_BASE_URL``,
    ``_SUMMARY_API_KEY``, ``_SUMMARY_TIMEOUT_S``, ``_THREAD_SUMMARY_MIN_MESSAGES``.
    """

    model_config = SettingsConfigDict(
        env_prefix="HYBRID_MEMORY_", extra="ignore", use_attribute_docstrings=True
    )

    max_items: int | None = Field(default=None, ge=1)
    """Most memories (messages, notes, summaries, tasks) a project keeps; unset: no limit."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens (embedding-model tokens) a project's memories hold together; unset: no limit."""
    ttl_days: float | None = Field(default=None, gt=0)
    """With ``HYBRID_MEMORY_EVICTION_POLICY=ttl``: memories older than this are evicted."""
    eviction_policy: Literal["lru", "fifo", "ttl"] = "lru"
    """Which memories go first when over a limit: least recently used, oldest, or expired then oldest."""
    summarize_on_evict: bool = True
    """Replace evicted memories by one summary memory instead of dropping them."""
    retention_days: float | None = Field(default=None, gt=0)
    """Memories older than this are expired: never read back, deleted by cleanup; a pin always wins."""
    summary_model: str | None = None
    """An OpenAI-compatible chat model for eviction summaries when the client cannot sample."""
    summary_base_url: str | None = None
    """Its endpoint (Ollama: http://localhost:11434/v1); unset: OpenAI's."""
    summary_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("HYBRID_MEMORY_SUMMARY_API_KEY", "OPENAI_API_KEY")
    )
    """The summary model's key (needed for OpenAI itself, not for a local server)."""
    summary_timeout_s: float = Field(default=30.0, gt=0)
    """The longest a summary request may take; then the extractive summary is used."""
    thread_summary_min_messages: int = Field(default=0, ge=0)
    """A thread with this many messages keeps a summary memory, refreshed as it grows; 0: only on request.

    Off by default: on LoCoMo's first two conversations multi-hop R@10 went 0.378 -> 0.350 with
    summaries at 8, as a summary takes a top-10 slot the turn-level metric cannot credit."""

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


MIN_TOKEN_CHARS = 16


class HttpSettings(BaseSettings):
    """``HYBRID_MEMORY_HTTP_*``: the streamable HTTP transport, its bearer token and allow-lists.

    ``--host`` / ``--port`` override ``HOST`` / ``PORT``. A token is required whenever the
    server listens beyond loopback; DNS-rebinding protection is on for every bind.
    """

    model_config = SettingsConfigDict(
        env_prefix="HYBRID_MEMORY_HTTP_", extra="ignore", use_attribute_docstrings=True
    )

    host: str = "127.0.0.1"
    """Where ``serve --transport http`` listens (``--host`` wins); beyond loopback a token is required."""
    port: int = Field(default=8765, ge=1, le=65535)
    """The HTTP port (``--port`` wins)."""
    token: SecretStr | None = None
    """The bearer token clients send as ``Authorization: Bearer <token>`` (16 characters or more); required
    beyond loopback."""
    token_file: Path | None = None
    """A file whose first line is the token (a Docker or Kubernetes secret); read once at start."""
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Host header values accepted besides loopback, comma-separated; ``name`` also allows ``name:*``."""
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Origin header values accepted besides loopback, comma-separated (``https://app.example``)."""

    @field_validator("allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    _file_token: SecretStr | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.token is not None and self.token_file is not None:
            raise ValueError("set HYBRID_MEMORY_HTTP_TOKEN or HYBRID_MEMORY_HTTP_TOKEN_FILE, not both")
        if self.token_file is not None:
            try:
                lines = self.token_file.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
                raise ValueError(
                    f"HYBRID_MEMORY_HTTP_TOKEN_FILE={self.token_file} cannot be read: {reason}"
                ) from None
            self._file_token = SecretStr(lines[0].strip() if lines else "")
        secret = self.bearer_token
        if secret is not None and len(secret.get_secret_value()) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"the HTTP token must have at least {MIN_TOKEN_CHARS} characters; make one with "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return self

    @property
    def bearer_token(self) -> SecretStr | None:
        """The token clients must send, from the setting or the file; None: no token."""
        return self.token if self.token is not None else self._file_token

    @property
    def loopback(self) -> bool:
        """True when only this machine can connect (127.0.0.0/8, ::1, localhost)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False


class Settings(BaseSettings):
    """``HYBRID_MEMORY_*``: the whole configuration."""

    model_config = SettingsConfigDict(
        env_prefix="HYBRID_MEMORY_", extra="ignore", use_attribute_docstrings=True
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    """Where the embedded stores live; default: the user data directory (``~/.local/share/mcp-hybrid-memory``
    on Linux)."""
    project: str | None = None
    """Project scope; when unset, the repository (else the directory) of the client's first MCP root, else
    ``default``; the command line's store commands use their working directory's."""
    user: str = "default"
    """User scope: every stored item carries it and every query is filtered by it."""
    vector_backend: Literal["edge", "qdrant"] | None = None
    """Which vector store; unset: ``qdrant`` when QDRANT_URL is set, else the embedded ``edge``."""
    graph_backend: Literal["sqlite", "neo4j"] | None = None
    """Which graph store; unset: ``neo4j`` when NEO4J_URI is set, else the embedded ``sqlite``."""
    chunk_tokens: int = Field(default=256, ge=16, le=8192)
    """A message longer than this many tokens is stored as overlapping chunks."""
    chunk_overlap_tokens: int = Field(default=32, ge=0)
    """Tokens two neighbouring chunks of a message share."""
    max_content_chars: int = Field(default=100_000, ge=1)
    """The longest message, note or task text accepted."""
    max_messages: int = Field(default=2_000, ge=1)
    """Most messages one ``remember_thread`` call takes (send a longer thread in parts)."""
    backend_timeout_s: float = Field(default=10.0, gt=0)
    """The longest an embedded store call, or a recall's graph channels, may take; a skipped channel is named
    in ``skipped_channels``."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Logs go to stderr, and to clients that asked with ``logging/setLevel``."""
    tools: Literal["all", "core"] = "all"
    """``core``: recall_memory, read_memory, remember_thread, create_note, create_link, get_linked_notes."""
    sync_remote: str | None = None
    """When set, the hooks run ``hybrid-memory sync`` with this remote after each session ends
    (see docs/sync.md); unset: sync only when you run it."""

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    """Embedding model"""
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    """Qdrant server"""
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    """Neo4j server"""
    ranking: RankingSettings = Field(default_factory=RankingSettings)
    """Recall ranking"""
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    """Limits, eviction and retention"""
    http: HttpSettings = Field(default_factory=HttpSettings)
    """HTTP transport"""

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
