"""Helpers shared by memchat's tests: users, settings, table counts, the brute-force reference ranking."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

import memchat
from memchat.embedders import get_embedder
from memchat.settings import Settings

ADMIN_TOKEN = "test-admin-token"
PASSWORD = "correct horse battery"
REPO_ROOT = Path(memchat.__file__).resolve().parent.parent
TABLES = ("users", "sessions", "conversations", "messages", "memories", "memory_tombstones")


def add_user(dsn: str, user_id: str, password_hash: str, email: str | None = None) -> str:
    """Insert a user directly (the admin API would pay scrypt per user); returns the e-mail."""
    # e-mails are unique without regard to case, ids are not: mark capitals ("U1" -> "^u1")
    email = email or "".join("^" + c.lower() if c.isupper() else c for c in user_id) + "@example.test"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO users (id, email, password_hash) VALUES (%s, %s, %s)",
                     (user_id, email, password_hash))
    return email


def settings_for(dsn: str, redis_url: str = "", **overrides: Any) -> Settings:
    values: dict[str, Any] = {"admin_token": ADMIN_TOKEN}
    values.update(overrides)
    if "faults" in values:
        values["faults"] = frozenset(values["faults"])
    return Settings(pg_dsn=dsn, redis_url=redis_url, **values)


def table_counts(dsn: str) -> dict[str, int]:
    """Rows per table, to show that a refused request changed nothing."""
    with psycopg.connect(dsn) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def owner_rows(dsn: str, user_id: str, embedder: str, now: datetime) -> tuple[list[str], np.ndarray]:
    """The rows recall may return for `user_id`: embedded, by `embedder`, not expired; ids and vectors."""
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        rows = conn.execute(
            "SELECT id, embedding FROM memories WHERE user_id = %s AND embedding IS NOT NULL AND embedder = %s"
            " AND (expires_at IS NULL OR expires_at > %s)", (user_id, embedder, now)).fetchall()
    ids = [r[0] for r in rows]
    vectors = np.array([r[1].to_numpy() for r in rows], dtype=np.float64).reshape(len(rows), -1)
    return ids, vectors


def brute_force(ids: list[str], vectors: np.ndarray, query: np.ndarray, k: int,
                threshold: float) -> list[tuple[str, float]]:
    """Reference recall: cosine of the query against every row, best first, ties by id, at least `threshold`."""
    if not ids:
        return []
    q = np.asarray(query, dtype=np.float64)
    scores = (vectors @ q) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    return [(ids[i], float(scores[i])) for i in order if scores[i] >= threshold][:k]


def ranking_mismatch(got: list[tuple[str, float]], want: list[tuple[str, float]], all_scores: dict[str, float],
                     threshold: float, eps: float = 1e-5, same_vector: dict[str, bytes] | None = None) -> str | None:
    """None when `got` is the reference ranking `want`; otherwise why not.

    Only float noise is forgiven: pgvector sums in float4, the reference in float64, so two different vectors whose
    reference cosines differ by less than `eps` may come in either order, and a row within `eps` of the threshold may
    be on either side of it. Rows with identical vectors (`same_vector`: id -> vector bytes) get bit-identical
    distances in both, so among them the order by id is checked strictly: the returned ones come in id order and are
    the smallest ids of their group."""
    def clip(items: list[tuple[str, float]]) -> list[tuple[str, float]]:
        return [(i, s) for i, s in items if abs(all_scores.get(i, s) - threshold) >= eps]

    got, want = clip(got), clip(want)
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}: got {got}, want {want}"
    if len({i for i, _ in got}) != len(got):
        return f"a row returned twice: {got}"
    for pos, ((gid, gscore), (wid, wscore)) in enumerate(zip(got, want, strict=True)):
        if gid not in all_scores:
            return f"rank {pos}: {gid} is not one of the owner's live rows"
        if abs(gscore - wscore) >= eps or abs(all_scores[gid] - wscore) >= eps:
            return (f"rank {pos}: {gid} scored {gscore:.6f} (reference {all_scores[gid]:.6f}),"
                    f" expected {wid} with {wscore:.6f}")
    if same_vector is not None:
        groups: dict[bytes, list[str]] = {}
        for gid, _ in got:
            groups.setdefault(same_vector[gid], []).append(gid)
        for key, returned in groups.items():
            everyone = sorted(i for i, v in same_vector.items() if v == key)
            if returned != everyone[:len(returned)]:
                return (f"rows with equal vectors not in id order: returned {returned},"
                        f" expected {everyone[:len(returned)]}")
    return None


def recall_at_k(got: list[tuple[str, float]], want: list[tuple[str, float]], all_scores: dict[str, float],
                eps: float = 1e-5) -> float:
    """Share of the reference results found; a row tied (within `eps`) with the last reference result counts."""
    if not want:
        return 1.0
    floor = want[-1][1] - eps
    found = sum(1 for gid, _ in got[:len(want)] if all_scores.get(gid, -2.0) >= floor)
    return found / len(want)


LEGACY_OWNERS = ("u1", "u2")
LEGACY_GHOST = "ghost"  # an owner the target database does not know
LEGACY_TOPICS = ["My favourite colour is {}.", "My dog is called {}.", "My order number is {}.",
                 "My flight number is {}.", "My bike lock code is {}."]


def legacy_records(n: int = 30, ghosts: tuple[int, ...] = (4, 15, 29)) -> list[dict]:
    """`n` legacy memories (ids lg_000.. in migration order); rows at `ghosts` belong to an unknown owner. Every third
    record carries its own hash-ngram-v1 embedding, the others get one from the loader; one has no content words
    (no embedding at all); some have no conversation or no expiry, as old records do."""
    v1 = get_embedder("hash-ngram-v1")
    records = []
    for i in range(n):
        text = LEGACY_TOPICS[i % len(LEGACY_TOPICS)].format(f"value-{i}") if i != 7 else "and so it is"
        rec = {"id": f"lg_{i:03d}", "user_id": LEGACY_GHOST if i in ghosts else LEGACY_OWNERS[i % 2],
               "text": text, "conversation_id": f"c_legacy_{i % 4}" if i % 4 else "",
               "created_at": f"2025-0{1 + i % 9}-1{i % 10}T08:00:00+00:00",
               "expires_at": "" if i % 5 == 0 else f"2027-0{1 + i % 9}-1{i % 10}T08:00:00+00:00"}
        if i % 3 == 0:
            rec["embedder"] = "hash-ngram-v1"
            vec = v1.embed(text)
            rec["embedding"] = vec.tolist() if vec is not None else None
        records.append(rec)
    return records


COOKIE = "memchat_session"


def session_cookie(resp) -> dict[str, str]:
    """The attributes of the Set-Cookie header for the session cookie, names lower-cased."""
    [header] = [h for h in resp.headers.get_list("set-cookie") if h.startswith(COOKIE + "=")]
    first, *attrs = [p.strip() for p in header.split(";")]
    out = {"value": first.split("=", 1)[1]}
    for a in attrs:
        name, _, value = a.partition("=")
        out[name.lower()] = value
    return out


def page_config(html: str) -> dict:
    m = re.search(r"<script>window\.MEMCHAT = (\{.*?\});</script>", html)
    assert m, "the chat page carries its front-end configuration"
    return json.loads(m.group(1))


def migration_counts(summary: str) -> str:
    """The migrate tool's summary without its timings, which it must print ("; rows copied in 0.1 s, ...")."""
    counts, timing = summary.strip().split("; ")
    assert re.fullmatch(r"rows copied in \d+\.\d s, index built in \d+\.\d s", timing), summary
    return counts
