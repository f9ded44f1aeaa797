"""The bench floor's pure parts: the exact nearest-neighbour pass and the memory an HNSW graph needs."""

from __future__ import annotations

import numpy as np

from tools.bench_floor import graph_memory, nearest_within_owners


def test_each_query_gets_its_owners_nearest_memories_best_first() -> None:
    rng = np.random.default_rng(7)
    owners = ["ann", "bob", "ann", "ann", "bob", "cy"]
    matrix = rng.normal(size=(len(owners) + 2, 8)).astype(np.float32)
    present = np.array([True, True, True, False, True, False, True, True])
    nearest = nearest_within_owners(owners, ["bob", "ann"], matrix, present, k=2)
    for q, owner in enumerate([*owners, "bob", "ann"]):
        mine = [i for i, o in enumerate(owners) if o == owner and present[i]]
        expected = sorted(mine, key=lambda i: -float(matrix[q] @ matrix[i]))[:2]
        assert list(nearest[q][:len(expected)]) == expected, f"query {q} of {owner}"
        assert all(i == -1 for i in nearest[q][len(expected):]), f"query {q} of {owner} padded"


def test_an_hnsw_graph_is_given_room_for_every_vector() -> None:
    assert graph_memory(10, 256) == "64MB"
    assert graph_memory(1_000_000, 256) == "1961MB"
