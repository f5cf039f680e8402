"""The packaged model run straight on onnxruntime: fastembed's pipeline without its import.

Importing fastembed costs about a second (it brings huggingface_hub, its HTTP clients and
its image models) before a first query can be embedded; onnxruntime, tokenizers and numpy
take a fraction of that. For the model shipped in the package nothing needs fastembed's
downloads, so :class:`PooledOnnxModel` does what fastembed does for it (mean-pooled,
normalised sentence-transformers) and gives the same vectors; other models still load
through fastembed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

MODEL_FILE = "model.onnx"


def load_tokenizer(model_dir: Path) -> Tokenizer:
    """``tokenizer.json`` set up for inference as fastembed sets it: truncated at the model's
    ``model_max_length``, padded to the longest text of a batch."""
    config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=int(config["model_max_length"]),
        direction=config.get("truncation_side") or truncation.get("direction", "right"),
    )
    special = model_dir / "special_tokens_map.json"
    if special.is_file():
        for token in json.loads(special.read_text(encoding="utf-8")).values():
            if isinstance(token, str):
                tokenizer.add_special_tokens([token])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or config["pad_token"]
    tokenizer.enable_padding(
        direction=config.get("padding_side") or padding.get("direction", "right"),
        pad_id=padding.get("pad_id", tokenizer.token_to_id(pad_token)),
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        length=None,
    )
    return tokenizer


class PooledOnnxModel:
    """A sentence-transformers ONNX export: tokens in, mean of the token vectors out, unit length.

    ``query_embed`` and ``passage_embed`` are the same for these models, as in fastembed.
    """

    def __init__(self, model_dir: Path, *, threads: int) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
        # See FastEmbedEmbedder: without its arena onnxruntime frees each call's buffers.
        options.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(
            str(model_dir / MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {node.name for node in self.session.get_inputs()}
        self.tokenizer = load_tokenizer(model_dir)

    def query_embed(self, texts: Sequence[str]) -> Iterator[np.ndarray[Any, Any]]:
        yield from self._embed(texts)

    def passage_embed(self, texts: Sequence[str], batch_size: int) -> Iterator[np.ndarray[Any, Any]]:
        for start in range(0, len(texts), batch_size):
            yield from self._embed(texts[start : start + batch_size])

    def _embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        tokens: np.ndarray[Any, Any] = self.session.run(None, feed)[0]
        # fastembed's mean pooling and normalisation, in float64, cast back at the end.
        summed = np.sum(tokens, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
        pooled = summed / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, ord=2, axis=1, keepdims=True), 1e-12)
        unit: np.ndarray[Any, Any] = (pooled / norms).astype(tokens.dtype, copy=False)
        return unit
