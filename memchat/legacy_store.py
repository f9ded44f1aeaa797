"""The legacy memory store teams migrate away from: Redis, a hash per memory, a per-user index, cosine in the app."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import redis

from memchat.embedders import get_embedder

PREFIX = "memchat:"
ALL = PREFIX + "mems"
# The legacy app's settings hash; its "timezone" field is the zone its naive local times were written in
# (memchat/legacy_times.py). A store without it wrote every time with a zone.
SETTINGS = PREFIX + "settings"
# fetch() marks a record stored without a vector on purpose (migrated as such, never embedded) with this key.
NO_VECTOR = "no_vector"


def memory_key(mid: str) -> str:
    return f"{PREFIX}mem:{mid}"


def user_key(user_id: str) -> str:
    return f"{PREFIX}user:{user_id}:mems"


def connect(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=5)


def declared_zone(client: redis.Redis) -> str | None:
    """The IANA name of the zone the store's naive times were written in, if it declares one."""
    name = client.hget(SETTINGS, "timezone")
    return name.decode() if name else None


def declare_zone(client: redis.Redis, name: str) -> None:
    client.hset(SETTINGS, "timezone", name)


# Every record of a chunk written inside Redis: ARGV holds, per record, its id, its user's set, whether it has an
# embedding, the FIELDS' values and the embedding. A command a field update (a pipeline of HSETs and ZADDs) cost the
# client four times the CPU in packing and parsing.
_WRITE_RECORDS = """
local names = {'id', 'user_id', 'conversation_id', 'text', 'embedder', 'created_at', 'expires_at'}
local i = 1
while i <= #ARGV do
  local key, fields = KEYS[2 + (i - 1) / 11], {}
  for j = 1, 7 do fields[2 * j - 1] = names[j]; fields[2 * j] = ARGV[i + 3 + j - 1] end
  if ARGV[i + 2] == '1' then
    fields[15] = 'embedding'; fields[16] = ARGV[i + 10]
  else
    redis.call('HDEL', key, 'embedding')
  end
  redis.call('HSET', key, unpack(fields))
  redis.call('ZADD', ARGV[i + 1], 0, ARGV[i])
  redis.call('ZADD', KEYS[1], 0, ARGV[i])
  i = i + 11
end
return (#KEYS - 1)
"""


def put(client: redis.Redis, records: Iterable[dict], default_embedder: str) -> int:
    """Store records ({id, user_id, text, ...}) in one command. A record without an "embedding" key gets one from
    its embedder (or `default_embedder`); one whose "embedding" is None is kept without a vector, as a legacy row
    stored so: its hash then has no embedding field at all (an empty one means the text had nothing to embed), also
    when the record is loaded again over a version that had one."""
    keys, values = [ALL], []
    for rec in records:
        embedder = rec.get("embedder") or default_embedder
        if "embedding" not in rec:
            vec = get_embedder(embedder).embed(rec["text"])
            embedding: bytes | None = vec.tobytes() if vec is not None else b""
        elif rec["embedding"] is not None:
            embedding = np.asarray(rec["embedding"], dtype=np.float32).tobytes()
        else:
            embedding = None
        keys.append(memory_key(rec["id"]))
        values += [rec["id"], user_key(rec["user_id"]), "0" if embedding is None else "1", rec["id"], rec["user_id"],
                   rec.get("conversation_id") or "", rec["text"], embedder, rec.get("created_at") or "",
                   rec.get("expires_at") or "", embedding or b""]
    if len(keys) == 1:
        return 0
    return int(client.eval(_WRITE_RECORDS, len(keys), *keys, *values))


def all_ids(client: redis.Redis) -> list[str]:
    """Every memory id, in a stable order (lexicographic), so that batches and resumption are reproducible."""
    return [i.decode() for i in client.zrangebylex(ALL, "-", "+")]


FIELDS = ("id", "user_id", "conversation_id", "text", "embedder", "created_at", "expires_at")
# Every record's fields in one reply, read inside Redis: a command a record (a pipeline of HGETALLs) cost the client
# five times the CPU in packing and parsing, and the migration waited on it.
_READ_RECORDS = ("local out = {} for i, key in ipairs(KEYS) do out[i] = redis.call('HMGET', key, unpack(ARGV)) end"
                 " return out")


def fetch(client: redis.Redis, ids: list[str]) -> list[dict]:
    """The records of these ids that exist, in order."""
    if not ids:
        return []
    replies = client.eval(_READ_RECORDS, len(ids), *(memory_key(mid) for mid in ids), *FIELDS, "embedding")
    out = []
    for values in replies:
        if all(v is None for v in values):
            continue  # no such memory
        emb = values[-1]
        rec = {name: v.decode() if v is not None else "" for name, v in zip(FIELDS, values, strict=False)}
        rec["embedding"] = np.frombuffer(emb, dtype=np.float32).copy() if emb else None
        rec[NO_VECTOR] = emb is None
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
