"""What a probe must recall, computed independently of any store: exact cosine over the owner's own vectors (as the
app's embedding model makes them), ties by id, only scores at or above the app's threshold. Used by the generator,
by the import of outside data, and by a capture's ties."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from harness.vocabulary.recall import Hit

TIE = 1e-6  # scores this close are equal to any store (float32 vectors): either may come first


def top_and_ties(ranked: list[Hit], k: int) -> tuple[list[Hit], list[Hit]]:
    """The first k of a ranking, and the hits after them that score the same as the k-th."""
    top = ranked[:k]
    return top, [h for h in ranked[k:k + 50] if len(top) == k and abs(h.score - top[-1].score) <= TIE]


def exact_ranking(matrix: np.ndarray, ids: list[str], query: bytes | None, k: int,
                  threshold: float) -> tuple[list[Hit], list[Hit]]:
    """The top k of `ids` (rows of `matrix`, float64 unit vectors) by exact cosine with `query`, ties by id, and
    the hits beyond k that tie with the k-th. No vector for the query: nothing is recalled."""
    if query is None or not ids:
        return [], []
    scores = matrix @ np.frombuffer(query, dtype="<f4").astype(np.float64)
    order = sorted(range(len(ids)), key=lambda i: (-round(float(scores[i]), 9), ids[i]))
    return top_and_ties([Hit(ids[i], float(scores[i])) for i in order if scores[i] >= threshold], k)


def owner_matrix(ids: Sequence[str], vectors: Sequence[bytes | None]) -> tuple[np.ndarray, list[str]]:
    """One owner's memories that have a vector, as a matrix and their ids in the same order."""
    rows = [i for i, v in enumerate(vectors) if v is not None]
    matrix = np.frombuffer(b"".join(vectors[i] for i in rows), dtype="<f4")  # type: ignore[misc]
    shape = (len(rows), -1) if rows else (0, 1)  # an owner with no vector at all
    return matrix.reshape(shape).astype(np.float64), [ids[i] for i in rows]


def expectations(ids: Sequence[str], owners: Sequence[str], vectors: Sequence[bytes | None],
                 asked: Sequence[tuple[str, bytes | None]], k: int,
                 threshold: float) -> list[tuple[list[Hit], list[Hit]]]:
    """For each (owner, question vector) of `asked`: the expected top k among that owner's memories, and its ties."""
    by_owner: dict[str, list[int]] = defaultdict(list)
    for i, owner in enumerate(owners):
        by_owner[owner].append(i)
    matrices = {owner: owner_matrix([ids[i] for i in by_owner[owner]], [vectors[i] for i in by_owner[owner]])
                for owner in {o for o, _ in asked}}
    return [exact_ranking(*matrices[owner], query, k, threshold) for owner, query in asked]
