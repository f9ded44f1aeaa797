"""Hashed n-gram embeddings: similar texts get close vectors, and each model name hashes differently.

A vector is the signed-hash bag of a text's character n-grams (padded words, so prefixes and suffixes count) and its
word unigrams, L2-normalised. blake2b keyed by the model's salt keeps vectors identical across processes and
machines (Python's `hash()` is randomised per process). v2 uses another salt and other n-gram sizes, so its
vectors are nearly orthogonal to v1's for the same text: memories embedded with one model are useless for queries
embedded with the other, which is exactly what an embedding-model change without re-embedding looks like.

`text-embedding-3-small` is v1's features at OpenAI's size (1536 dimensions) under OpenAI's name, for apps that name
their embedding model from OpenAI's catalogue (Letta's `openai/text-embedding-3-small`); like OpenAI's, it gives
fewer dimensions when a request asks for them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

DIMS = 384
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class EmbeddingModel:
    name: str
    salt: bytes
    char_ngrams: tuple[int, ...]
    word_weight: float = 1.0
    dims: int = DIMS


MODELS: dict[str, EmbeddingModel] = {
    m.name: m
    for m in (
        EmbeddingModel("hash-ngram-v1", b"memtest-v1", (3,)),
        EmbeddingModel("hash-ngram-v2", b"memtest-v2", (2, 4)),
        EmbeddingModel("text-embedding-3-small", b"memtest-v1", (3,), dims=1536),
    )
}


def _features(text: str, model: EmbeddingModel) -> list[str]:
    words = _WORD.findall(text.lower())
    feats = [f"w:{w}" for w in words]
    for word in words:
        padded = f" {word} "
        for n in model.char_ngrams:
            feats += [f"c{n}:{padded[i:i + n]}" for i in range(max(1, len(padded) - n + 1))]
    return feats


def _slot(feature: str, salt: bytes, dims: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=salt).digest()
    bucket = int.from_bytes(digest[:4], "little") % dims
    sign = 1.0 if digest[4] & 1 else -1.0  # the sign hash keeps collisions from adding up to fake similarity
    return bucket, sign


def embed(text: str, model_name: str, dims: int | None = None) -> list[float]:
    """The unit vector of `text` under `model_name` (a KeyError names no known model), in the model's own size or
    `dims`; all zeros for empty text."""
    model = MODELS[model_name]
    size = dims or model.dims
    vec = np.zeros(size, dtype=np.float64)
    for feature in _features(text, model):
        bucket, sign = _slot(feature, model.salt, size)
        vec[bucket] += sign * (model.word_weight if feature.startswith("w:") else 1.0)
    norm = float(np.linalg.norm(vec))
    if norm > 0:
        vec /= norm
    return [round(float(x), 8) for x in vec]
