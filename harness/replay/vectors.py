"""A replay's vectors, kept in a file as they are read instead of in the process: a million of them are a gigabyte,
which the bench process held through the whole replay (its peak is the index build, when it needs none of them)."""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

ABSENT = -1  # the length recorded for a memory without a vector


class StoredVectors(Sequence):
    """A sequence of vectors (bytes, or None where a memory has none), appended in order and read back by index or
    in order; the bytes live in an unnamed temporary file (gone when this is), reached by offset."""

    def __init__(self, vectors: Iterable[bytes | None] = ()) -> None:
        self._file = tempfile.TemporaryFile(prefix="memtest-vectors-")
        self._offsets = array("q")
        self._lengths = array("i")
        self._end = 0
        for vector in vectors:
            self.append(vector)

    def append(self, vector: bytes | None) -> None:
        self._offsets.append(self._end)
        if vector is None:
            self._lengths.append(ABSENT)
            return
        self._lengths.append(len(vector))
        self._file.write(vector)
        self._end += len(vector)

    def __len__(self) -> int:
        return len(self._lengths)

    @overload
    def __getitem__(self, i: int) -> bytes | None: ...

    @overload
    def __getitem__(self, i: slice) -> list[bytes | None]: ...

    def __getitem__(self, i: int | slice) -> bytes | None | list[bytes | None]:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        length = self._lengths[i]
        if length == ABSENT:
            return None
        self._file.flush()
        return os.pread(self._file.fileno(), length, self._offsets[i])

    def __iter__(self) -> Iterator[bytes | None]:
        """In order, read a megabyte at a time."""
        self._file.flush()
        fd, start, chunk = self._file.fileno(), 0, b""
        for offset, length in zip(self._offsets, self._lengths, strict=True):
            if length == ABSENT:
                yield None
                continue
            if offset + length > start + len(chunk):
                start, chunk = offset, os.pread(fd, max(1 << 20, length), offset)
            yield chunk[offset - start:offset - start + length]

    def close(self) -> None:
        self._file.close()
