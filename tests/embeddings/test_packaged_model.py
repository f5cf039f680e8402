"""The int8 all-MiniLM-L6-v2 inside the package: the default, offline from the first call.

Compared with the fp32 export where that is at hand (``HYBRID_MEMORY_TEST_FP32_MODEL_PATH``,
else ``../shared/models/all-MiniLM-L6-v2-onnx`` beside the repository).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from hybrid_memory.backends import open_vector_store
from hybrid_memory.embeddings import FastEmbedEmbedder, build_embedder
from hybrid_memory.embeddings.chunking import approximate_token_spans
from hybrid_memory.errors import HybridMemoryError
from hybrid_memory.settings import FP32_MODEL, PACKAGED_MODEL, PACKAGED_MODEL_DIR, EmbeddingSettings
from hybrid_memory.tools.budget import most_tokens
from tests.conftest import REPO, make_settings

FP32_DIR = Path(
    os.environ.get("HYBRID_MEMORY_TEST_FP32_MODEL_PATH")
    or REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
)
SENTENCES = [
    "Caroline went hiking in the mountains with her friends last summer.",
    "What did Melanie paint for the art show?",
    "I adopted a dog from the shelter; his name is Oscar.",
    "The quarterly report is due on Friday at noon.",
]

# Without any of these the server must pick the packaged model.
UNSET = ("MODEL", "MODEL_PATH", "PROVIDER")


@pytest.fixture
def no_model_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in UNSET:
        monkeypatch.delenv(f"HYBRID_MEMORY_EMBEDDING_{name}", raising=False)


@pytest.mark.usefixtures("no_model_settings")
def test_no_settings_mean_the_packaged_model() -> None:
    settings = EmbeddingSettings()
    embedder = build_embedder(settings)

    assert (settings.model, settings.model_path) == (PACKAGED_MODEL, None)
    assert isinstance(embedder, FastEmbedEmbedder)
    assert (embedder.model_name, embedder.dimension) == (PACKAGED_MODEL, 384)


def test_a_model_directory_alone_is_the_fp32_export_unless_it_is_the_packaged_one(tmp_path: Path) -> None:
    assert EmbeddingSettings(model_path=tmp_path).model == FP32_MODEL
    assert EmbeddingSettings(model_path=PACKAGED_MODEL_DIR).model == PACKAGED_MODEL
    assert (
        EmbeddingSettings(model="BAAI/bge-small-en-v1.5", model_path=tmp_path).model
        == "BAAI/bge-small-en-v1.5"
    )


def test_the_package_ships_the_model_its_readme_describes() -> None:
    readme = (PACKAGED_MODEL_DIR / "README.md").read_text()
    files = sorted(path.name for path in PACKAGED_MODEL_DIR.iterdir())
    digest = hashlib.sha256((PACKAGED_MODEL_DIR / "model.onnx").read_bytes()).hexdigest()
    size = (PACKAGED_MODEL_DIR / "model.onnx").stat().st_size

    assert files == [
        "LICENSE", "README.md", "config.json", "model.onnx", "special_tokens_map.json",
        "tokenizer.json", "tokenizer_config.json", "vocab.txt",
    ]  # fmt: skip
    assert (PACKAGED_MODEL_DIR / "LICENSE").read_text().split("\n", 2)[1].strip() == "Apache License"
    assert re.search(r"`model.onnx` of ([\d,]+) bytes, sha256\s+`([0-9a-f]{64})`", readme)
    assert re.findall(r"`model.onnx` of ([\d,]+) bytes, sha256\s+`([0-9a-f]{64})`", readme) == [
        (f"{size:,}", digest)
    ]


@pytest.mark.model
@pytest.mark.subprocess
def test_a_fresh_process_with_no_settings_and_no_network_embeds(tmp_path: Path) -> None:
    """What ``pip install`` alone gives: no model settings, hub offline, an empty model cache."""
    script = (
        "import sys, json, anyio\n"
        "from hybrid_memory.embeddings import build_embedder\n"
        "from hybrid_memory.settings import EmbeddingSettings\n"
        "e = build_embedder(EmbeddingSettings(), cache_dir=__import__('pathlib').Path(sys.argv[1]))\n"
        "v = anyio.run(e.embed_query, 'where did we go hiking?')\n"
        "print(json.dumps([e.model_name, len(v), sum(x * x for x in v), 'openai' in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRID_MEMORY_EMBEDDING_")}
    env.update(
        HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), NO_PROXY="*", HTTPS_PROXY="http://127.0.0.1:9"
    )
    cache = tmp_path / "models"
    done = subprocess.run(
        [sys.executable, "-c", script, str(cache)], env=env, capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    name, length, norm, openai_imported = json.loads(done.stdout)
    assert (name, length, round(norm, 5), openai_imported) == (PACKAGED_MODEL, 384, 1.0, False)
    assert not cache.exists() or not any(cache.iterdir())


@pytest.mark.model
async def test_int8_vectors_stay_close_to_fp32() -> None:
    if not (FP32_DIR / "model.onnx").is_file():
        pytest.skip(f"no fp32 model at {FP32_DIR}")
    int8 = FastEmbedEmbedder(PACKAGED_MODEL, None)
    fp32 = FastEmbedEmbedder(FP32_MODEL, FP32_DIR)

    cosines = np.sum(
        np.array(await int8.embed_documents(SENTENCES)) * np.array(await fp32.embed_documents(SENTENCES)),
        axis=1,
    )

    assert cosines.min() > 0.97, cosines


async def test_a_store_filled_with_fp32_refuses_the_packaged_model(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    async with open_vector_store(settings, dimension=384, model=FP32_MODEL):
        pass

    with pytest.raises(HybridMemoryError) as refused:
        async with open_vector_store(settings, dimension=384, model=PACKAGED_MODEL):
            pass

    assert f"was filled by embedding model '{FP32_MODEL}' (dimension 384)" in str(refused.value)
    assert f"but '{PACKAGED_MODEL}' (dimension 384) is configured" in str(refused.value)


async def test_the_packaged_model_gives_a_text_the_same_vector_whatever_it_is_embedded_with(
    embedder: FastEmbedEmbedder,
) -> None:
    # Dynamic int8 quantization scales activations per call: batched texts would change each other.
    texts = ["ok", "The billing ledger moved to PostgreSQL 16 last May, after the audit.", "Thanks!"]

    together = await embedder.embed_documents(texts)
    alone = [(await embedder.embed_documents([text]))[0] for text in texts]

    assert EmbeddingSettings().texts_per_call == 1
    assert together == alone


# Any text, and texts of the scripts that NFD, lower-casing and CJK splitting touch most.
_TEXTS = st.text() | st.text(alphabet=st.sampled_from("İıﬁßǅ가각ÅéœŒ中文字 ,.\u0301\u0308\u200b\U0001f600"))
_PACKAGED = build_embedder(EmbeddingSettings(model_path=PACKAGED_MODEL_DIR))  # its tokenizer only: no load


@given(text=_TEXTS)
@hypothesis_settings(max_examples=300, deadline=None)
def test_no_text_has_more_model_tokens_than_utf8_bytes(text: str) -> None:
    # The answer budget skips tokenizing whatever fits by this bound (tools.budget.most_tokens).
    assert _PACKAGED.count_tokens(text) <= most_tokens(text)
    assert len(approximate_token_spans(text)) <= most_tokens(text)


def test_the_packaged_model_runs_without_fastembed_and_gives_its_vectors() -> None:
    # fastembed's import (about a second) is what a first recall after start-up waited for.
    script = (
        "import sys, anyio, json\n"
        "from hybrid_memory.embeddings import build_embedder\n"
        "from hybrid_memory.settings import EmbeddingSettings\n"
        "e = build_embedder(EmbeddingSettings())\n"
        f"texts = {SENTENCES!r}\n"
        "docs = anyio.run(e.embed_documents, texts)\n"
        "query = anyio.run(e.embed_query, texts[1])\n"
        "print(json.dumps({'fastembed': 'fastembed' in sys.modules, 'docs': docs, 'query': query}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRID_MEMORY_EMBEDDING_")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    direct = json.loads(done.stdout)
    assert direct["fastembed"] is False

    from fastembed import TextEmbedding

    reference = TextEmbedding(FP32_MODEL, specific_model_path=str(PACKAGED_MODEL_DIR), threads=1)
    # The int8 model quantizes each batch as a whole, and the packaged model embeds one text a call.
    expected = [next(iter(reference.passage_embed([text]))) for text in SENTENCES]
    docs = np.asarray(direct["docs"], dtype=np.float32)
    assert np.array_equal(docs, np.asarray(expected, dtype=np.float32))
    query = next(iter(reference.query_embed([SENTENCES[1]])))
    assert np.array_equal(np.asarray(direct["query"], dtype=np.float32), query)
