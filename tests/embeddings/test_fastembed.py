"""FastEmbedEmbedder with the real fp32 all-MiniLM-L6-v2 ONNX model, offline.

The model directory is ``HYBRID_MEMORY_TEST_FP32_MODEL_PATH``, else
``HYBRID_MEMORY_EMBEDDING_MODEL_PATH``, else ``../shared/models/all-MiniLM-L6-v2-onnx``
next to the repository; tests that need it skip without it (the packaged int8 model
has its own tests in test_packaged_model.py). One loaded embedder serves the module (loading takes a
while), so the tests that use it share the module's event loop.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
import pytest_asyncio
from tokenizers import Tokenizer

from hybrid_memory.embeddings import FastEmbedEmbedder, build_embedder, chunk_text
from hybrid_memory.embeddings.chunking import inference_batches
from hybrid_memory.embeddings.fastembed_provider import KNOWN_DIMENSIONS
from hybrid_memory.errors import BackendError
from hybrid_memory.settings import FP32_MODEL, PACKAGED_MODEL, EmbeddingSettings

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIR = Path(
    os.environ.get("HYBRID_MEMORY_TEST_FP32_MODEL_PATH")
    or os.environ.get("HYBRID_MEMORY_EMBEDDING_MODEL_PATH")
    or Path(__file__).resolve().parents[3] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
)
REQUIRED = "model.onnx, tokenizer.json, tokenizer_config.json"

# The shared embedder lives in the module's event loop: its tests must run there too.
in_module_loop = pytest.mark.asyncio(loop_scope="module")


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


def reference_tokenizer(model_dir: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@pytest.fixture(scope="module")
def model_dir() -> Path:
    if not MODEL_DIR.is_dir():
        pytest.skip(f"no model directory at {MODEL_DIR}")
    return MODEL_DIR


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def embedder(model_dir: Path) -> AsyncIterator[FastEmbedEmbedder]:
    """The model, loaded once; batches of three so that a few texts already span batches."""
    embedder = FastEmbedEmbedder(MODEL, model_dir, batch_size=3)
    with anyio.fail_after(120):
        await embedder.warm_up()
    yield embedder
    await embedder.close()


@pytest.mark.model
@in_module_loop
async def test_vectors_are_384_long_and_unit_length(embedder: FastEmbedEmbedder) -> None:
    documents = await embedder.embed_documents(["The cat sat on the mat.", "", "Ünïcödé and 日本語 text"])
    query = await embedder.embed_query("where is the cat?")

    assert embedder.dimension == 384
    for vector in [*documents, query]:
        assert len(vector) == 384
        assert math.hypot(*vector) == pytest.approx(1.0, abs=1e-5)
        assert all(isinstance(value, float) for value in vector)


@pytest.mark.model
@in_module_loop
async def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: FastEmbedEmbedder) -> None:
    query = await embedder.embed_query("How do I reset my password?")
    paraphrase, unrelated = await embedder.embed_documents(
        ["Steps to change a forgotten login password", "The recipe needs two cups of flour and an egg"]
    )

    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.3


@pytest.mark.model
@in_module_loop
async def test_a_batch_gives_what_single_texts_give(embedder: FastEmbedEmbedder) -> None:
    texts = [
        "short",
        "a somewhat longer sentence about databases and vector search",
        "Remember: the deploy is on Friday.",
        "x " * 200,
        "Neo4j stores the notes",
        "Qdrant stores the vectors",
        "and a seventh text to end on a partial batch",
    ]

    batch = await embedder.embed_documents(texts)
    singles = [(await embedder.embed_documents([text]))[0] for text in texts]
    queries = [await embedder.embed_query(text) for text in texts]

    for together, alone, as_query in zip(batch, singles, queries, strict=True):
        assert together == pytest.approx(alone, abs=1e-5)
        # all-MiniLM-L6-v2 has no query or passage prefixes.
        assert as_query == pytest.approx(alone, abs=1e-5)


@pytest.mark.model
@in_module_loop
async def test_onnxruntime_runs_on_one_thread(embedder: FastEmbedEmbedder) -> None:
    await embedder.embed_query("load")
    session = embedder._model.model.model  # type: ignore[union-attr]  # TextEmbedding -> model -> ort session
    options = session.get_session_options()

    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


@pytest.mark.model
@in_module_loop
async def test_concurrent_first_calls_load_the_model_once(
    model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fresh = FastEmbedEmbedder(MODEL, model_dir)
    results: list[list[float]] = []

    async def embed() -> None:
        results.append(await fresh.embed_query("the same question"))

    with (
        caplog.at_level(logging.INFO, logger="hybrid_memory.embeddings.fastembed_provider"),
        anyio.fail_after(120),
    ):
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(embed)

    loads = [record for record in caplog.records if record.getMessage().startswith("Loaded embedding model")]
    assert len(loads) == 1
    assert len(results) == 5
    assert all(vector == results[0] for vector in results)
    await fresh.close()


@pytest.mark.model
@in_module_loop
async def test_token_counts_match_the_model_tokenizer(embedder: FastEmbedEmbedder, model_dir: Path) -> None:
    tokenizer = reference_tokenizer(model_dir)
    long_text = "The quick brown fox jumps over the lazy dog. " * 80  # far past 128 and 512 tokens

    assert embedder.count_tokens("Hello, world!") == 4  # hello , world !  (no [CLS] or [SEP])
    assert embedder.count_tokens("") == 0
    for text in ["unbelievably tokenised", "Ünïcödé and 日本語 text", long_text]:
        assert embedder.count_tokens(text) == len(tokenizer.encode(text, add_special_tokens=False).ids)
    assert embedder.count_tokens(long_text) == 800


def test_token_counts_need_no_model_load(model_dir: Path) -> None:
    unloaded = FastEmbedEmbedder(MODEL, model_dir)

    assert unloaded.count_tokens("Hello, world!") == 4
    assert unloaded.token_spans("Hello, world!") == [(0, 5), (5, 6), (7, 12), (12, 13)]
    assert unloaded._model is None


def test_chunks_fit_the_model_tokenizer(model_dir: Path) -> None:
    unloaded = FastEmbedEmbedder(MODEL, model_dir)
    text = (
        "Our memory server keeps conversation threads in Qdrant. "
        "Notes live in a graph, joined by typed links.\n\n"
        "Recall merges dense vectors, keywords and the graph neighbourhood; an unbelievably long "
        "hyphenated-compound-word-that-the-tokenizer-splits appears here too. "
    ) * 12

    chunks = chunk_text(text, max_tokens=40, overlap_tokens=8, token_spans=unloaded.token_spans)

    assert len(chunks) > 1
    assert all(0 < unloaded.count_tokens(chunk) <= 40 for chunk in chunks)
    assert all(chunk in text for chunk in chunks)


def test_dimension_is_known_without_loading(model_dir: Path) -> None:
    unloaded = FastEmbedEmbedder(MODEL, model_dir)

    assert unloaded.dimension == 384
    assert unloaded.model_name == MODEL
    assert unloaded._model is None


async def test_a_missing_model_directory_says_what_to_do(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    embedder = FastEmbedEmbedder(MODEL, missing)

    with pytest.raises(BackendError) as error:
        await embedder.embed_query("hello")

    assert str(error.value) == (
        f"Could not load the embedding model '{MODEL}' from {missing}: no such directory. "
        "Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to a local directory holding the model's ONNX export "
        f"({REQUIRED}), or unset it to let fastembed download the model."
    )
    # The dimension of a known model needs no load, so a bad path does not break it.
    assert embedder.dimension == 384


async def test_a_directory_without_the_model_files_names_them(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")
    embedder = FastEmbedEmbedder(MODEL, tmp_path)

    with pytest.raises(BackendError) as error:
        await embedder.embed_documents(["hello"])

    assert str(error.value) == (
        f"Could not load the embedding model '{MODEL}' from {tmp_path}: it has no model.onnx, "
        "tokenizer_config.json. Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to a local directory holding the "
        f"model's ONNX export ({REQUIRED}), or unset it to let fastembed download the model."
    )


async def test_a_corrupt_model_file_is_a_backend_error_chained_to_onnxruntime(
    tmp_path: Path, model_dir: Path
) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json"):
        shutil.copy(model_dir / name, tmp_path / name)
    (tmp_path / "model.onnx").write_bytes(b"not an onnx model")
    embedder = FastEmbedEmbedder(MODEL, tmp_path)

    with pytest.raises(BackendError) as first:
        await embedder.embed_query("hello")
    with pytest.raises(BackendError) as again:
        await embedder.embed_query("hello")

    assert str(first.value) == (
        f"Could not load the embedding model '{MODEL}' from {tmp_path}: [ONNXRuntimeError] : 7 : "
        f"INVALID_PROTOBUF : Load model from {tmp_path / 'model.onnx'} failed:Protobuf parsing failed. "
        "Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to a local directory holding the model's ONNX export "
        f"({REQUIRED}), or unset it to let fastembed download the model."
    )
    assert type(first.value.__cause__).__module__.startswith("onnxruntime")
    # The failure is remembered, not retried on every call.
    assert str(again.value) == str(first.value)
    assert again.value.__cause__ is first.value.__cause__
    # The tokenizer file is fine, so token counts still are the model's.
    assert embedder.count_tokens("Hello, world!") == 4


async def test_no_model_path_and_no_download_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # HF_HUB_OFFLINE makes fastembed look in its cache only, as it would find it with no network.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = FastEmbedEmbedder(MODEL, None, cache_dir=tmp_path)

    with anyio.fail_after(60), pytest.raises(BackendError) as error:
        await embedder.warm_up()

    assert str(error.value) == (
        f"Could not load the embedding model '{MODEL}': it is not in {tmp_path} and could not be "
        f"downloaded (Could not load model {MODEL} from any source). Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH "
        "to a local ONNX model directory, or allow the download from huggingface.co (network access, "
        "HF_HUB_OFFLINE unset)."
    )
    assert error.value.__cause__ is not None
    # Without a model or a tokenizer file, token counts are the estimate.
    assert embedder.count_tokens("Hello, world!") == 6


async def test_an_unknown_model_name_says_what_to_do() -> None:
    embedder = FastEmbedEmbedder("acme/no-such-model", None)
    expected = (
        "fastembed has no embedding model named 'acme/no-such-model'. Set HYBRID_MEMORY_EMBEDDING_MODEL to "
        "one of fastembed's models (or unset it for the packaged all-MiniLM-L6-v2-int8), or set "
        "HYBRID_MEMORY_EMBEDDING_PROVIDER=openai to use an OpenAI-compatible server."
    )

    with pytest.raises(BackendError) as from_dimension:
        _ = embedder.dimension
    with pytest.raises(BackendError) as from_embedding:
        await embedder.embed_query("hello")

    assert str(from_dimension.value) == expected
    assert str(from_embedding.value) == expected


async def test_nothing_to_embed_loads_nothing(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(MODEL, tmp_path / "nowhere")  # would fail to load

    assert await embedder.embed_documents([]) == []
    with pytest.raises(
        TypeError, match=r"^embed_documents takes a sequence of texts; use embed_query for one string$"
    ):
        await embedder.embed_documents("abc")


def test_known_dimensions_agree_with_fastembed() -> None:
    from fastembed import TextEmbedding

    supported = {str(model["model"]).lower(): model["dim"] for model in TextEmbedding.list_supported_models()}
    supported[PACKAGED_MODEL.lower()] = supported[FP32_MODEL.lower()]  # ours: the same network, int8

    assert {name: supported.get(name) for name in KNOWN_DIMENSIONS} == KNOWN_DIMENSIONS


def test_a_model_fastembed_knows_has_its_dimension_without_loading() -> None:
    assert FastEmbedEmbedder("BAAI/bge-small-en-v1.5", None).dimension == 384
    assert FastEmbedEmbedder("jinaai/jina-embeddings-v2-small-en", None).dimension == 512


def test_build_embedder_picks_fastembed_by_default(tmp_path: Path) -> None:
    embedder = build_embedder(EmbeddingSettings(model_path=tmp_path, threads=1, batch_size=16))

    assert isinstance(embedder, FastEmbedEmbedder)
    assert (embedder.model_name, embedder.dimension) == (MODEL, 384)


def test_batches_hold_at_most_the_batch_size_and_long_texts_go_in_smaller_ones() -> None:
    short, long = "a" * 100, "b" * 1000
    texts = [long, short, long, short, short, long, long, long]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))

    batches = inference_batches(order, texts, 2)

    assert batches == [[1, 3], [4, 0], [2, 5], [6, 7]]
    assert inference_batches(order, texts, 8) == [[1, 3, 4], [0, 2], [5, 6], [7]]
