"""Deterministic local text embedders: hashed word, word-pair and character n-grams, L2-normalised.

No download and no randomness: the same text gives the same vector on every machine, so expected recall results can be
computed outside the app. Two versions exist so that an embedding-model change can be modelled.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

DIMS = 256

# Function words carry no memory; without them a question and the fact it asks about share only content words.
STOP_WORDS = frozenset(
    "a an and are as at be but by can did do does for from had has have how i i'm in is it its me my of on or our "
    "please remember so that the their them then there these this to was we were what when where which who why will "
    "with you your actually also again tell know".split()
)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class HashNgramEmbedder:
    name: str
    salt: str
    dims: int = DIMS

    def features(self, text: str) -> list[tuple[str, float]]:
        words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
        feats: list[tuple[str, float]] = [(f"w:{w}", 1.0) for w in words]
        feats += [(f"b:{a}_{b}", 0.7) for a, b in zip(words, words[1:], strict=False)]
        for w in words:
            padded = f"#{w}#"
            feats += [(f"c:{padded[i:i + 3]}", 0.25) for i in range(len(padded) - 2)]
        return feats

    def embed(self, text: str) -> np.ndarray | None:
        """The unit vector of `text`, or None when it has no content words (nothing to remember or recall)."""
        slots, weights = [], []
        for feat, weight in self.features(text):
            slot, sign = _slot(self.salt, feat, self.dims)
            slots.append(slot)
            weights.append(sign * weight)
        # Summed slot by slot in the order of the features, as adding them one at a time would.
        vec = np.bincount(slots, weights=weights, minlength=self.dims) if slots else np.zeros(self.dims)
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            return None
        return (vec / norm).astype(np.float32)


@lru_cache(maxsize=1 << 20)
def _slot(salt: str, feature: str, dims: int) -> tuple[int, float]:
    """Where a feature lands and with which sign: the same words recur across texts, so it is hashed once (bulk
    embedding of a whole history is several times faster)."""
    h = int.from_bytes(hashlib.blake2b(f"{salt}|{feature}".encode(), digest_size=8).digest(), "little")
    return h % dims, 1.0 if (h >> 32) & 1 else -1.0


EMBEDDERS: dict[str, HashNgramEmbedder] = {
    e.name: e for e in (HashNgramEmbedder("hash-ngram-v1", "v1"), HashNgramEmbedder("hash-ngram-v2", "v2"))
}
DEFAULT_EMBEDDER = "hash-ngram-v1"


def get_embedder(name: str) -> HashNgramEmbedder:
    try:
        return EMBEDDERS[name]
    except KeyError:
        raise ValueError(f"unknown embedder {name!r}; known: {', '.join(EMBEDDERS)}") from None
