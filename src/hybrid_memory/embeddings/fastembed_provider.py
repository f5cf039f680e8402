"""Local embeddings: fastembed runs an ONNX model on the CPU, with no torch and no server.

The model loads in a worker thread, exactly once: on :meth:`FastEmbedEmbedder.warm_up` (the server
calls it as its stores open, beside the rest of its start) or else on the first embedding. Inference runs
on one onnxruntime thread, one call at a time: on a two-core machine shared with the stores, more threads
measured 40x slower under load, and one call at a time keeps query latency flat while a long thread is
being remembered.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread
import numpy as np
from tokenizers import Tokenizer

from hybrid_memory.embeddings.chunking import TokenSpan, approximate_token_spans, inference_batches
from hybrid_memory.errors import BackendError
from hybrid_memory.settings import FP32_MODEL, PACKAGED_MODEL, PACKAGED_MODEL_DIR

if TYPE_CHECKING:
    from fastembed import TextEmbedding

    from hybrid_memory.embeddings.onnx_runner import PooledOnnxModel

    Model = TextEmbedding | PooledOnnxModel

logger = logging.getLogger(__name__)

_ARCHITECTURES = {PACKAGED_MODEL.lower(): FP32_MODEL}
"""Our models that fastembed knows under another name: the one whose pooling and files they share."""

KNOWN_DIMENSIONS: dict[str, int] = {
    PACKAGED_MODEL.lower(): 384,
    "sentence-transformers/all-minilm-l6-v2": 384,
    "sentence-transformers/paraphrase-multilingual-minilm-l12-v2": 384,
    "baai/bge-small-en-v1.5": 384,
    "baai/bge-base-en-v1.5": 768,
    "baai/bge-large-en-v1.5": 1024,
    "nomic-ai/nomic-embed-text-v1.5": 768,
    "intfloat/multilingual-e5-large": 1024,
    "mixedbread-ai/mxbai-embed-large-v1": 1024,
}
"""Dimensions of common fastembed models (lower-cased names), so that :attr:`dimension`
needs neither the model nor fastembed's one-second import before a store is opened."""

_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


class FastEmbedEmbedder:
    """An :class:`~hybrid_memory.embeddings.base.Embedder` over a local fastembed ONNX model.

    Args:
        model: The packaged ``all-MiniLM-L6-v2-int8``, or fastembed's name for a model
            (``sentence-transformers/all-MiniLM-L6-v2``).
        model_path: A local directory holding the model's ONNX export, for offline
            use; ``None``: the packaged directory for the packaged model, else fastembed
            downloads the model by name into ``cache_dir``.
        threads: onnxruntime's intra- and inter-op threads for one call.
        batch_size: Texts per inference call; between calls a query can get its turn.
        cache_dir: Where fastembed keeps downloaded models (its own default when ``None``).
    """

    def __init__(
        self,
        model: str,
        model_path: Path | None,
        *,
        threads: int = 1,
        batch_size: int = 8,
        cache_dir: Path | None = None,
    ) -> None:
        if threads < 1 or batch_size < 1:
            raise ValueError(f"threads and batch_size must be at least 1, got {threads} and {batch_size}")
        self._model_name = model
        self._fastembed_name = _ARCHITECTURES.get(model.lower(), model)
        if model_path is None and model.lower() == PACKAGED_MODEL.lower():
            model_path = PACKAGED_MODEL_DIR
        self._model_path = model_path
        self._threads = threads
        self._batch_size = batch_size
        self._cache_dir = cache_dir
        self._model: Model | None = None
        self._load_error: BackendError | None = None
        self._dimension: int | None = None
        self._tokenizer: Tokenizer | None = None
        self._tokenizer_file_tried = False
        self._tokenizer_lock = threading.Lock()
        # The async lock makes concurrent first calls wait for one load instead of
        # each starting a thread; the thread lock keeps the load single on its own,
        # whichever thread or event loop asks.
        self._load_lock = anyio.Lock()
        self._load_thread_lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def model_name(self) -> str:
        """The model's name as configured, stored with the vectors it makes."""
        return self._model_name

    @property
    def dimension(self) -> int:
        """The vectors' length, known without loading the model.

        Common models are in :data:`KNOWN_DIMENSIONS`; others come from fastembed's
        model list (importing fastembed, about a second, once).

        Raises:
            BackendError: fastembed has no model by this name.
        """
        if self._dimension is None:
            known = KNOWN_DIMENSIONS.get(self._model_name.lower())
            if known is None:
                known = int(self._describe_model()["dim"])
            self._dimension = known
        return self._dimension

    async def warm_up(self) -> None:
        """Load the model and its tokenizer now, off the event loop, and run it once.

        The server calls this after the MCP handshake, so the first ``remember`` or
        ``recall`` does not pay for the load. Safe to call any number of times.

        Raises:
            BackendError: the model cannot be loaded; the message says how to fix it.
        """
        model = await self._ensure_loaded()
        await anyio.to_thread.run_sync(self._warm_up_sync, model, limiter=self._limiter)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for ``texts``, in order, embedded as documents (passages).

        The model reads at most 512 tokens of a text (all-MiniLM-L6-v2 was trained
        on 256): split longer ones with :func:`chunk_text` first.

        Raises:
            BackendError: the model cannot be loaded or failed on the texts.
        """
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts; use embed_query for one string")
        if not texts:
            return []
        model = await self._ensure_loaded()
        # A batch is padded to its longest text, so texts of like length go together:
        # on chat turns this made embedding 2-3x faster than batches in arrival order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        # One thread call per batch, so a query waiting for the limiter gets in
        # between the batches of a long document list.
        for positions in inference_batches(order, texts, self._batch_size):
            batch = [texts[i] for i in positions]
            embedded = await anyio.to_thread.run_sync(
                partial(self._embed_sync, model, batch, query=False), limiter=self._limiter
            )
            for i, vector in zip(positions, embedded, strict=True):
                vectors[i] = vector
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """A unit-length vector for a search query.

        Raises:
            BackendError: the model cannot be loaded or failed on the text.
        """
        model = await self._ensure_loaded()
        vectors = await anyio.to_thread.run_sync(
            partial(self._embed_sync, model, [text], query=True), limiter=self._limiter
        )
        return vectors[0]

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as the model counts them, special tokens left out.

        Uses ``tokenizer.json`` from ``model_path`` (no ONNX load needed), else the
        loaded model's tokenizer. Before a downloaded model is loaded there is no
        tokenizer at hand and the count is :func:`approximate_token_spans`' estimate.
        """
        return len(self.token_spans(text))

    def token_spans(self, text: str) -> list[TokenSpan]:
        """Character spans of the model's tokens in ``text``, for :func:`chunk_text`.

        Falls back to :func:`approximate_token_spans` exactly when :meth:`count_tokens` does.
        """
        tokenizer = self._get_tokenizer()
        if tokenizer is None:
            return approximate_token_spans(text)
        return list(tokenizer.encode(text, add_special_tokens=False).offsets)

    async def close(self) -> None:
        """Release the model; a later call loads it again."""
        self._model = None
        self._load_error = None

    async def _ensure_loaded(self) -> Model:
        model = self._model
        if model is not None:
            return model
        async with self._load_lock:
            # If this task is cancelled mid-load it returns at once (a server whose stores could
            # not open stops without waiting for the model); the thread still finishes and
            # `_load_sync` keeps the model, so the work is not lost.
            return await anyio.to_thread.run_sync(
                self._load_sync, limiter=self._limiter, abandon_on_cancel=True
            )

    def _load_sync(self) -> Model:
        with self._load_thread_lock:
            if self._model is not None:
                return self._model
            # A failed load is not retried: its fixes (a path, the network, the
            # model name) all take a restart, and a retried download blocks ~40 s.
            if self._load_error is not None:
                raise BackendError(str(self._load_error)) from self._load_error.__cause__
            try:
                self._model = self._create_model()
            except BackendError as exc:
                self._load_error = exc
                raise
            return self._model

    def _warm_up_sync(self, model: Model) -> None:
        self._get_tokenizer()
        # onnxruntime allocates its buffers on the first run: pay for that here too.
        self._embed_sync(model, ["warm-up"], query=False)

    def _create_model(self) -> Model:
        if self._model_path is not None and self._model_path.resolve() == PACKAGED_MODEL_DIR:
            return self._create_packaged()
        from fastembed import TextEmbedding

        description = self._describe_model()
        kwargs: dict[str, Any] = {}
        if self._model_path is not None:
            required = list(dict.fromkeys([description["model_file"], *description["additional_files"]]))
            required += _TOKENIZER_FILES
            problem = _missing_files(self._model_path, required)
            if problem:
                raise BackendError(self._bad_path_message(problem, required))
            kwargs["specific_model_path"] = str(self._model_path)
        started = time.perf_counter()
        try:
            model = TextEmbedding(
                self._fastembed_name,
                cache_dir=str(self._cache_dir) if self._cache_dir is not None else None,
                threads=self._threads,
                # Without its arena onnxruntime frees a call's buffers when the call ends: the
                # arena kept the largest it ever needed (130 MB after eight 256-token texts),
                # and embedding measured no slower without it (118 texts/CPU-s either way).
                enable_cpu_mem_arena=False,
                **kwargs,
            )
        except Exception as exc:  # onnxruntime raises its own, unexported, error types
            if self._model_path is not None:
                raise BackendError(self._bad_path_message(_first_line(exc), required)) from exc
            raise BackendError(self._download_message(_first_line(exc))) from exc
        logger.info(
            "Loaded embedding model %s from %s in %.2f s",
            self._model_name,
            self._model_path or "fastembed's cache",
            time.perf_counter() - started,
        )
        return model

    def _create_packaged(self) -> PooledOnnxModel:
        """The model shipped in the package, on onnxruntime without fastembed (see ``onnx_runner``)."""
        from hybrid_memory.embeddings.onnx_runner import PooledOnnxModel

        started = time.perf_counter()
        try:
            model = PooledOnnxModel(PACKAGED_MODEL_DIR, threads=self._threads)
        except Exception as exc:  # onnxruntime's and tokenizers' own error types
            raise BackendError(
                self._bad_path_message(_first_line(exc), ["model.onnx", *_TOKENIZER_FILES])
            ) from exc
        logger.info("Loaded embedding model %s in %.2f s", self._model_name, time.perf_counter() - started)
        return model

    def _describe_model(self) -> dict[str, Any]:
        from fastembed import TextEmbedding

        wanted = self._fastembed_name.lower()
        for description in TextEmbedding.list_supported_models():
            if str(description["model"]).lower() == wanted:
                return description
        raise BackendError(
            f"fastembed has no embedding model named {self._model_name!r}. Set "
            f"HYBRID_MEMORY_EMBEDDING_MODEL to one of fastembed's models (or unset it for the packaged "
            f"{PACKAGED_MODEL}), or set HYBRID_MEMORY_EMBEDDING_PROVIDER=openai "
            "to use an OpenAI-compatible server."
        )

    def _embed_sync(self, model: Model, texts: list[str], *, query: bool) -> list[list[float]]:
        try:
            arrays: Iterable[Any] = (
                model.query_embed(texts) if query else model.passage_embed(texts, batch_size=len(texts))
            )
            matrix = np.asarray(list(arrays), dtype=np.float32)
        except Exception as exc:  # onnxruntime's errors, as above
            raise BackendError(
                f"The embedding model {self._model_name!r} failed on {len(texts)} text(s): {_first_line(exc)}"
            ) from exc
        if self._dimension is None:
            self._dimension = int(matrix.shape[1])
        # fastembed normalises most models but not all (plain mean pooling): the
        # stores rank by dot product, so make sure.
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0.0, 1.0, norms)
        return cast("list[list[float]]", matrix.tolist())

    def _get_tokenizer(self) -> Tokenizer | None:
        if self._tokenizer is not None:
            return self._tokenizer
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._tokenizer = self._read_tokenizer()
            return self._tokenizer

    def _read_tokenizer(self) -> Tokenizer | None:
        source: Tokenizer | None = None
        if self._model_path is not None and not self._tokenizer_file_tried:
            self._tokenizer_file_tried = True
            path = self._model_path / "tokenizer.json"
            if path.is_file():
                try:
                    source = Tokenizer.from_file(str(path))
                except Exception as exc:  # a corrupt file: the ONNX load will say so too
                    logger.warning("Cannot read %s (%s); estimating token counts", path, exc)
        if source is None and self._model is not None:
            loaded = getattr(getattr(self._model, "model", None), "tokenizer", None)
            if isinstance(loaded, Tokenizer):
                # A copy: the model's own tokenizer truncates and pads for inference.
                source = Tokenizer.from_str(loaded.to_str())
        if source is None:
            return None
        # tokenizer.json files carry the export's truncation and padding (128 tokens
        # for all-MiniLM-L6-v2's): counting needs neither.
        source.no_truncation()
        source.no_padding()
        return source

    def _bad_path_message(self, reason: str, required: Sequence[str]) -> str:
        return (
            f"Could not load the embedding model {self._model_name!r} from {self._model_path}: {reason}. "
            "Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to a local directory holding the model's ONNX export "
            f"({', '.join(required)}), or unset it to let fastembed download the model."
        )

    def _download_message(self, reason: str) -> str:
        cache = self._cache_dir or "fastembed's cache"
        return (
            f"Could not load the embedding model {self._model_name!r}: it is not in {cache} "
            f"and could not be downloaded ({reason}). Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to a local "
            "ONNX model directory, or allow the download from huggingface.co (network access, "
            "HF_HUB_OFFLINE unset)."
        )


def _missing_files(directory: Path, names: Sequence[str]) -> str:
    """What is wrong with ``directory`` as a model directory, or '' when nothing is."""
    if not directory.is_dir():
        return "no such directory"
    missing = [name for name in names if not (directory / name).is_file()]
    return f"it has no {', '.join(missing)}" if missing else ""


def _first_line(exc: BaseException) -> str:
    """The gist of a third-party error, to quote inside one of our sentences."""
    lines = str(exc).strip().splitlines()
    return lines[0].rstrip(".") if lines else type(exc).__name__
