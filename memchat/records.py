"""Memory records as JSON Lines, shared by `embed`, `export` and `redis-load`: vector encodings, strict timestamps,
and the validation of a record before it is written anywhere."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import IO
from zoneinfo import ZoneInfo

import numpy as np

from memchat.embedders import EMBEDDERS, get_embedder
from memchat.legacy_times import LegacyTimeError, parse_legacy_time

ENCODINGS = ("json", "base64")


class RecordError(ValueError):
    """What is wrong with one record, naming the field; the caller prefixes the file and line."""


def vector_fields(vec: np.ndarray | None, encoding: str) -> dict:
    """The vector as output fields: `embedding` (rounded floats) or `embedding_f32` (base64 of float32 LE bytes)."""
    if encoding == "base64":
        # The fast path: no per-float formatting, and exact (the stored float32 bits).
        return {"embedding_f32": base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
                if vec is not None else None}
    return {"embedding": [round(float(x), 7) for x in vec] if vec is not None else None}


def decode_f32(text: str) -> np.ndarray:
    """The vector of an `embedding_f32` string; raises RecordError when it is not base64 of float32 values."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise RecordError("embedding_f32 is not base64") from None
    if len(raw) % 4:
        raise RecordError(f"embedding_f32 holds {len(raw)} bytes, not a whole number of float32 values")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def read_lines(stream: IO[str], path: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-blank line, one at a time; a line that is not a JSON object raises."""
    for n, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise RecordError(f"{path}:{n}: not valid JSON ({e.msg})") from None
        if not isinstance(rec, dict):
            raise RecordError(f'{path}:{n}: each line must be an object with a "text" string')
        yield n, rec


def _vector(rec: dict, dims: int) -> tuple[bool, np.ndarray | None]:
    """(has a vector key, the vector or None for an explicit null)."""
    if "embedding" in rec and "embedding_f32" in rec:
        raise RecordError("give either embedding or embedding_f32, not both")
    if "embedding_f32" in rec:
        value = rec["embedding_f32"]
        if value is None:
            return True, None
        if not isinstance(value, str):
            raise RecordError("embedding_f32 must be a base64 string or null")
        vec = decode_f32(value)
        name = "embedding_f32"
    elif "embedding" in rec:
        value = rec["embedding"]
        if value is None:
            return True, None
        arr = np.asarray(value) if isinstance(value, list) else None
        if arr is None or arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iuf"):
            raise RecordError("embedding must be a list of numbers or null")
        vec = arr.astype(np.float32)
        name = "embedding"
    else:
        return False, None
    if len(vec) != dims:
        raise RecordError(f"{name} has {len(vec)} dimensions, not the embedder's {dims}")
    if not np.isfinite(vec).all():
        raise RecordError(f"{name} holds a value that is not a finite number")
    return True, vec


def legacy_record(rec: dict, default_embedder: str, zone: ZoneInfo | None = None) -> dict:
    """A record checked and normalised for legacy_store.put; raises RecordError naming the first bad field.
    Its times are kept as written: with a zone, or naive local times when the store declares their `zone`.
    The result has an `embedding` key only when the input gave a vector or an explicit null."""
    for field in ("id", "user_id"):
        if not isinstance(rec.get(field), str) or not rec[field]:
            got = "missing" if rec.get(field) is None else "not a non-empty string"
            raise RecordError(f'"id" and "user_id" must be strings ("{field}" is {got})')
    if not isinstance(rec.get("text"), str):
        raise RecordError('"text" must be a string')
    cid = rec.get("conversation_id")
    if cid is not None and not isinstance(cid, str):
        raise RecordError("conversation_id must be a string or null")
    for field in ("created_at", "expires_at"):
        if rec.get(field) not in (None, ""):
            try:
                parse_legacy_time(rec[field], field, zone)
            except LegacyTimeError as e:
                raise RecordError(str(e)) from None
    embedder = rec.get("embedder") or default_embedder
    if embedder not in EMBEDDERS:
        raise RecordError(f"embedder '{embedder}' is unknown; known: {', '.join(EMBEDDERS)}")
    out = {"id": rec["id"], "user_id": rec["user_id"], "conversation_id": cid or "", "text": rec["text"],
           "embedder": embedder, "created_at": rec.get("created_at") or "", "expires_at": rec.get("expires_at") or ""}
    given, vec = _vector(rec, get_embedder(embedder).dims)
    if given:
        out["embedding"] = vec
    return out
