"""The legacy memory store teams migrate away from: Redis, a hash per memory, a per-user index, cosine in the app."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import redis

from memchat.embedders import get_embedder

PREFIX = "memchat:"
ALL = PREFIX + "mems"
# fetch() marks a record stored without a vector on purpose (migrated as such, never embedded) with this key.
NO_VECTOR = "no_vector"


def memory_key(mid: str) -> str:
    return f"{PREFIX}mem:{mid}"


def user_key(user_id: str) -> str:
    return f"{PREFIX}user:{user_id}:mems"


def connect(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=5)


def put(client: redis.Redis, records: Iterable[dict], default_embedder: str) -> int:
    """Store records ({id, user_id, text, ...}) in one pipeline. A record without an "embedding" key gets one from
    its embedder (or `default_embedder`); one whose "embedding" is None is kept without a vector, as a legacy row
    stored so: its hash then has no embedding field at all (an empty one means the text had nothing to embed)."""
    n = 0
    pipe = client.pipeline(transaction=False)
    for rec in records:
        embedder = rec.get("embedder") or default_embedder
        fields = {
            "id": rec["id"], "user_id": rec["user_id"], "conversation_id": rec.get("conversation_id") or "",
            "text": rec["text"], "embedder": embedder, "created_at": rec.get("created_at") or "",
            "expires_at": rec.get("expires_at") or "",
        }
        if "embedding" not in rec:
            vec = get_embedder(embedder).embed(rec["text"])
            fields["embedding"] = vec.tobytes() if vec is not None else b""
        elif rec["embedding"] is not None:
            fields["embedding"] = np.asarray(rec["embedding"], dtype=np.float32).tobytes()
        key = memory_key(rec["id"])
        pipe.delete(key)  # a record loaded again must not keep an embedding field of its earlier version
        pipe.hset(key, mapping=fields)
        pipe.zadd(user_key(rec["user_id"]), {rec["id"]: 0})
        pipe.zadd(ALL, {rec["id"]: 0})
        n += 1
    pipe.execute()
    return n


def all_ids(client: redis.Redis) -> list[str]:
    """Every memory id, in a stable order (lexicographic), so that batches and resumption are reproducible."""
    return [i.decode() for i in client.zrangebylex(ALL, "-", "+")]


def fetch(client: redis.Redis, ids: list[str]) -> list[dict]:
    pipe = client.pipeline(transaction=False)
    for mid in ids:
        pipe.hgetall(memory_key(mid))
    out = []
    for raw in pipe.execute():
        if not raw:
            continue
        rec = {k.decode(): v for k, v in raw.items()}
        kept_null = "embedding" not in rec
        emb = rec.pop("embedding", b"")
        rec = {k: v.decode() for k, v in rec.items()}
        rec["embedding"] = np.frombuffer(emb, dtype=np.float32).copy() if emb else None
        rec[NO_VECTOR] = kept_null
        out.append(rec)
    return out


def iter_all(client: redis.Redis, batch: int = 500) -> Iterator[dict]:
    ids = all_ids(client)
    for i in range(0, len(ids), batch):
        yield from fetch(client, ids[i:i + batch])


def search(client: redis.Redis, user_id: str, query: str, embedder: str, k: int,
           threshold: float) -> list[tuple[str, float]]:
    """The legacy recall: every memory of the user scored in the app."""
    qvec = get_embedder(embedder).embed(query)
    if qvec is None:
        return []
    ids = [i.decode() for i in client.zrange(user_key(user_id), 0, -1)]
    scored = [(r["id"], float(r["embedding"] @ qvec)) for r in fetch(client, ids)
              if r["embedding"] is not None and r["embedder"] == embedder]
    scored.sort(key=lambda t: (-t[1], t[0]))
    return [s for s in scored if s[1] >= threshold][:k]
