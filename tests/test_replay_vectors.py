"""harness.replay.vectors.StoredVectors: a replay's vectors in a file, read back exactly, by index and in order."""

from __future__ import annotations

import random

from harness.replay.vectors import StoredVectors


def _vectors(count: int) -> list[bytes | None]:
    rng = random.Random(7)
    return [None if rng.random() < 0.1 else rng.randbytes(rng.choice([4, 1024, 3 << 20])) for _ in range(count)]


def test_every_vector_comes_back_exactly_by_index_and_in_order() -> None:
    vectors = _vectors(300)  # some larger than the megabyte read at a time
    stored = StoredVectors(vectors)
    assert len(stored) == len(vectors)
    assert list(stored) == vectors
    assert [stored[i] for i in range(len(vectors))] == vectors
    assert stored[-1] == vectors[-1] and stored[5:9] == vectors[5:9]


def test_appended_after_a_read_and_none_kept_as_none() -> None:
    stored = StoredVectors([b"\x00" * 8])
    assert stored[0] == b"\x00" * 8
    stored.append(None)
    stored.append(b"\x01\x02\x03\x04")
    assert list(stored) == [b"\x00" * 8, None, b"\x01\x02\x03\x04"]
    assert len(StoredVectors()) == 0 and list(StoredVectors()) == []
