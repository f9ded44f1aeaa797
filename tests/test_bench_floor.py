"""The bench floor's pure parts: the exact nearest-neighbour pass, an HNSW graph's memory, the app's index builds."""

from __future__ import annotations

import numpy as np
import pytest

from tools.bench_floor import floor_builds, graph_memory, nearest_within_owners


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


def test_the_floor_builds_the_app_s_own_index_definitions_on_its_table() -> None:
    one_graph = "CREATE INDEX memories_embedding_hnsw ON public.memories USING hnsw (embedding vector_cosine_ops)"
    part = ("CREATE INDEX memories_embedding_hnsw_3_of_10 ON public.memories USING hnsw (embedding vector_cosine_ops)"
            " WHERE (mod((hashtext(user_id) & 2147483647), 10) = 3)")
    assert floor_builds([one_graph, part]) == [
        ("CREATE INDEX ON floor_memories USING hnsw (embedding vector_cosine_ops)", "true"),
        ("CREATE INDEX ON floor_memories USING hnsw (embedding vector_cosine_ops)"
         " WHERE (mod((hashtext(user_id) & 2147483647), 10) = 3)", "(mod((hashtext(user_id) & 2147483647), 10) = 3)"),
    ]
    with pytest.raises(ValueError, match="cannot rebuild"):
        floor_builds(["CREATE UNIQUE INDEX x ON public.other USING btree (id)"])
