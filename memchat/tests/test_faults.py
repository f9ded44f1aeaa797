"""Each switchable fault, at the level where it lives: the faulty app behaves differently from the clean one."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from memchat import assistant, corpus, legacy_store
from memchat.conversations import Message
from memchat.db import Pool
from memchat.faults import CATALOG
from memchat.migration import migrate
from memchat.tests.helpers import (
    LEGACY_OWNERS,
    PASSWORD,
    add_user,
    brute_force,
    legacy_records,
    owner_rows,
    page_config,
    ranking_mismatch,
    recall_at_k,
    session_cookie,
    settings_for,
)
from memchat.web import HELD_BACK_WRITE_FAULTS

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
TESTED = {"recall-ignores-user", "history-idor", "session-not-persistent", "context-dropped", "threshold-too-strict",
          "ttl-too-short", "migration-drops-last-batch", "migration-null-embedding", "ivfflat-before-load",
          "migration-created-at-reset", "migration-drops-conversation",
          "stale-embeddings", "unload-write-lost", "write-race", "long-conversation-forgets",
          "reopened-conversation-wins", "sign-out-write-lost", "title-splits-emoji", "common-word-key-forgotten",
          "many-facts-lost", "ime-enter-sends", "write-held-back"}


def test_every_fault_in_the_catalogue_has_a_test_here() -> None:
    assert set(CATALOG) == TESTED


def test_recall_ignores_user(db, make_store) -> None:
    for uid in ("u1", "u2"):
        add_user(db, uid, "x")
    make_store().write("u2", None, ["My dog is called Rex."], NOW)
    q = "What is my dog called?"
    assert make_store().search("u1", q, NOW) == []
    leaked = make_store(faults={"recall-ignores-user"}).search("u1", q, NOW)
    assert [h.text for h in leaked] == ["My dog is called Rex."]


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_history_idor(make_app, faulty: bool) -> None:
    app = make_app(faults={"history-idor"} if faulty else set())
    _, alice = app.user("alice")
    _, bob = app.user("bob")
    cid = alice.post("/api/conversations", json={}).json()["conversation"]["id"]
    alice.post(f"/api/conversations/{cid}/messages", json={"text": "My wifi password is hunter2."})
    api, page = bob.get(f"/api/conversations/{cid}/messages"), bob.get(f"/c/{cid}")
    if faulty:
        assert api.status_code == 200 and api.json()["messages"][0]["text"] == "My wifi password is hunter2."
        assert page.status_code == 200 and "hunter2" in page.text
    else:
        assert api.status_code == 404 and page.status_code == 404 and "hunter2" not in page.text
    # writing into it needs the owner even with the fault
    assert bob.post(f"/api/conversations/{cid}/messages", json={"text": "hi"}).status_code == 404


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_session_not_persistent(make_app, faulty: bool) -> None:
    app = make_app(faults={"session-not-persistent"} if faulty else set())
    email, _ = app.user("u1")
    cookie = session_cookie(app.client().post("/api/login", json={"email": email, "password": PASSWORD}))
    assert "httponly" in cookie and cookie["samesite"].lower() == "lax"
    if faulty:
        assert "max-age" not in cookie and "expires" not in cookie  # dies with the browser
    else:
        assert int(cookie["max-age"]) == 30 * 24 * 3600


def test_context_dropped() -> None:
    history = [Message(1, "user", "My locker number is 42.", NOW),
               Message(2, "assistant", "Got it. I'll remember that your locker number is 42.", NOW)]
    question = "What is my locker number?"
    clean = assistant.respond(question, history, [], settings_for("", ""))
    faulty = assistant.respond(question, history, [], settings_for("", "", faults={"context-dropped"}))
    assert clean.reply == "Your locker number is 42."
    assert faulty.reply == "I don't remember your locker number."


def test_threshold_too_strict(db, make_store) -> None:
    add_user(db, "u1", "x")
    make_store().write("u1", None, ["Remember that my favourite colour is teal"], NOW)
    q = "What is my favourite colour?"
    [hit] = make_store().search("u1", q, NOW)
    assert 0.25 <= hit.score < 0.9  # a paraphrase, not a repeat
    assert make_store(faults={"threshold-too-strict"}).search("u1", q, NOW) == []
    assert make_store(faults={"threshold-too-strict"}).search("u1", "Remember that my favourite colour is teal", NOW)


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_ttl_too_short(make_app, faulty: bool) -> None:
    app = make_app(faults={"ttl-too-short"} if faulty else set(), settable_clock=True)
    _, client = app.user("u1")
    client.post("/api/admin/clock", json={"now": "2026-01-01T09:00:00+00:00"}, headers=app.admin)
    [mid] = client.post("/api/memories", json={"items": ["My gym sessions are on Saturdays."]}).json()["stored"]
    q = {"q": "When are my gym sessions?"}
    assert [r["id"] for r in client.get("/api/memories/search", params=q).json()["results"]] == [mid]
    expires = datetime.fromisoformat(client.get("/api/memories").json()["memories"][0]["expires_at"])
    want = datetime(2026, 1, 1, 9, tzinfo=UTC) + (timedelta(hours=365) if faulty else timedelta(days=365))
    assert abs((expires - want).total_seconds()) < 60  # the settable clock keeps running from where it was set
    client.post("/api/admin/clock", json={"advance_days": 30}, headers=app.admin)
    results = client.get("/api/memories/search", params=q).json()["results"]
    assert [r["id"] for r in results] == ([] if faulty else [mid])
    listed = [m["id"] for m in client.get("/api/memories").json()["memories"]]
    assert listed == ([] if faulty else [mid])  # an expired memory is forgotten, not listed


def _migrate(db: str, redis_url: str, batch_size: int, faults: set[str]):
    for uid in LEGACY_OWNERS:
        add_user(db, uid, "x")
    client = legacy_store.connect(redis_url)
    pool = Pool(db, size=2)
    try:
        legacy_store.put(client, legacy_records(), "hash-ngram-v1")
        return migrate(client, pool, settings_for(db, faults=faults), batch_size=batch_size)
    finally:
        pool.close()
        client.close()


def _ids(dsn: str, where: str = "true") -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {r[0] for r in conn.execute(f"SELECT id FROM memories WHERE {where}").fetchall()}


def test_migration_drops_last_batch(pg_server, redis_server) -> None:
    clean_db, faulty_db, exact_db = (pg_server.create_database() for _ in range(3))
    clean = _migrate(clean_db, redis_server.new_url(), 7, set())
    faulty = _migrate(faulty_db, redis_server.new_url(), 7, {"migration-drops-last-batch"})
    # 30 ids in batches of 7: the final two (lg_028, and lg_029 of an unknown owner) are never read
    assert (clean.read, clean.written) == (30, 27)
    assert (faulty.read, faulty.written) == (28, 26)
    assert _ids(clean_db) - _ids(faulty_db) == {"lg_028"}
    # with a batch size that divides the row count there is no partial batch, and nothing is lost
    exact = _migrate(exact_db, redis_server.new_url(), 10, {"migration-drops-last-batch"})
    assert (exact.read, exact.written) == (30, 27)


def test_migration_null_embedding(pg_server, redis_server) -> None:
    clean_db, faulty_db = pg_server.create_database(), pg_server.create_database()
    _migrate(clean_db, redis_server.new_url(), 7, set())
    _migrate(faulty_db, redis_server.new_url(), 7, {"migration-null-embedding"})
    assert _ids(clean_db, "embedding IS NULL") == {"lg_007"}  # the one legacy record without content words
    # the last row of every batch of 7 (lg_029, the last of the final batch, has an unknown owner)
    assert _ids(faulty_db, "embedding IS NULL") == {"lg_006", "lg_007", "lg_013", "lg_020", "lg_027"}


def _fields(dsn: str) -> dict[str, tuple]:
    with psycopg.connect(dsn) as conn:
        return {r[0]: r[1:] for r in conn.execute("SELECT id, conversation_id, created_at FROM memories").fetchall()}


def test_migration_created_at_reset(pg_server, redis_server) -> None:
    clean_db, faulty_db = pg_server.create_database(), pg_server.create_database()
    _migrate(clean_db, redis_server.new_url(), 7, set())
    started = datetime.now(UTC)
    _migrate(faulty_db, redis_server.new_url(), 7, {"migration-created-at-reset"})
    clean, faulty = _fields(clean_db), _fields(faulty_db)
    assert all(created.year == 2025 for _, created in clean.values())  # as the legacy records say
    assert set(faulty) == set(clean) and all(created >= started for _, created in faulty.values())
    assert all(faulty[i][0] == clean[i][0] for i in clean)  # nothing else changes


def test_migration_drops_conversation(pg_server, redis_server) -> None:
    clean_db, faulty_db = pg_server.create_database(), pg_server.create_database()
    _migrate(clean_db, redis_server.new_url(), 7, set())
    _migrate(faulty_db, redis_server.new_url(), 7, {"migration-drops-conversation"})
    clean, faulty = _fields(clean_db), _fields(faulty_db)
    assert sum(1 for conversation, _ in clean.values() if conversation) > 10
    assert all(conversation is None for conversation, _ in faulty.values())
    assert all(faulty[i][1] == clean[i][1] for i in clean)  # nothing else changes


IVF_OWNERS = {"big": 2400, **{f"s{i:02d}": 5 + i for i in range(20)}}


def _big_owner_recall(dsn: str, store) -> tuple[float, int]:
    ids, vectors = owner_rows(dsn, "big", "hash-ngram-v1", NOW)
    rng = random.Random(3)
    recalls, differ = [], 0
    for topic in sorted(corpus.TOPICS):
        q = rng.choice(corpus.TOPICS[topic][2])
        qvec = store.embedder.embed(q)
        all_scores = dict(brute_force(ids, vectors, qvec, len(ids), -2.0))
        want = brute_force(ids, vectors, qvec, 5, store.settings.effective_threshold)
        got = [(h.id, h.score) for h in store.search("big", q, NOW, k=5)]
        recalls.append(recall_at_k(got, want, all_scores))
        differ += ranking_mismatch(got, want, all_scores, store.settings.effective_threshold) is not None
    return sum(recalls) / len(recalls), differ


def test_ivfflat_before_load(pg_server, make_store) -> None:
    rows = corpus.generate(IVF_OWNERS, seed=11)
    results = {}
    for faulty in (False, True):
        dsn = pg_server.create_database()
        store = make_store(dsn=dsn, index="ivfflat", ann_min_rows=100,
                           faults={"ivfflat-before-load"} if faulty else set())  # ensure_index on the empty table
        corpus.load(dsn, rows, NOW, special=False)
        store.build_index()  # as the migration does after loading (with the fault: keeps the early index, ANALYZE)
        with psycopg.connect(dsn) as conn:
            lists = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding_ivfflat'"
                                 ).fetchone()[0]
        results[faulty] = (*_big_owner_recall(dsn, store), lists)
    print(f"\nivfflat-before-load, big owner, 20 questions: recall@5 / searches differing / index:"
          f" clean {results[False]}, fault {results[True]}")
    assert results[False][:2] == (1.0, 0) and "lists='2'" in results[False][2]
    assert "lists='100'" in results[True][2]
    assert results[True][1] > 0 and results[True][0] < 0.9


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_stale_embeddings(db, make_store, faulty: bool) -> None:
    add_user(db, "u1", "x")
    ids = make_store(embedder="hash-ngram-v1").write("u1", None, ["My piano teacher is Clara.",
                                                                  "My blood type is A positive."], NOW)
    q = "Who is my piano teacher?"
    store = make_store(embedder="hash-ngram-v2", faults={"stale-embeddings"} if faulty else set())
    changed = store.reembed(batch_size=1)
    with psycopg.connect(db) as conn:
        models = {r[0] for r in conn.execute("SELECT embedder FROM memories").fetchall()}
    if faulty:
        assert changed == 0 and models == {"hash-ngram-v1"}
        assert store.search("u1", q, NOW) == []  # v1 vectors are never compared with a v2 query
    else:
        assert changed == 2 and models == {"hash-ngram-v2"}
        assert [h.id for h in store.search("u1", q, NOW)] == [ids[0]]
        assert store.reembed() == 0  # nothing stale is left


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_common_word_key_forgotten(db, make_store, faulty: bool) -> None:
    """A question of common words only has no vector: the asked fact is found by its key, unless the fault skips it."""
    add_user(db, "u1", "x")
    store = make_store(faults={"common-word-key-forgotten"} if faulty else set())
    store.write("u1", None, ["My will is with the notary Smith."], NOW)
    recalled = store.search("u1", "What is my will?", NOW, fact_key="will")
    assert [h.text for h in recalled] == ([] if faulty else ["My will is with the notary Smith."])
    assert store.search("u1", "What is my will?", NOW) == []  # no key asked, nothing to compare: nothing


@pytest.mark.parametrize(("fault", "key", "clean_value", "faulty_value"), [
    ("write-held-back", "holdWrites", False, True),
    ("many-facts-lost", "writeBatch", 50, 0),
    ("ime-enter-sends", "enterSendsWhileComposing", False, True),
    ("unload-write-lost", "flushOn", "pagehide", "beforeunload"),
    ("write-race", "writeQueue", "append", "latest-only"),
    ("sign-out-write-lost", "flushBeforeLogout", True, False),
    ("title-splits-emoji", "titleByCharacters", True, False),
])
def test_front_end_faults_are_chosen_by_the_page_config(make_app, fault, key, clean_value, faulty_value) -> None:
    configs = {}
    for faulty in (False, True):
        app = make_app(faults={fault} if faulty else set())
        _, client = app.user(f"u_{faulty}")
        configs[faulty] = page_config(client.get("/").text)
    assert configs[False][key] == clean_value and configs[True][key] == faulty_value
    # The regressions of a held-back write bring the hold back with them; nothing else changes.
    held_back = fault in HELD_BACK_WRITE_FAULTS
    assert (configs[False]["holdWrites"], configs[True]["holdWrites"]) == (False, held_back)
    same = {key, "holdWrites"}
    assert {k: v for k, v in configs[True].items() if k not in same} == {
        k: v for k, v in configs[False].items() if k not in same}


def chat_as(client):  # noqa: ANN001, ANN201 - the app's test client of one signed-in user
    """Two helpers for one user: open a conversation; say something in it (storing what the page would remember)."""
    def conversation() -> str:
        return client.post("/api/conversations", json={}).json()["conversation"]["id"]

    def say(cid: str, text: str) -> str:
        turn = client.post(f"/api/conversations/{cid}/messages", json={"text": text}).json()
        if turn["remember"]:
            client.post("/api/memories", json={"items": turn["remember"], "conversation_id": cid})
        return turn["reply"]["text"]

    return conversation, say


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_long_conversation_forgets(make_app, faulty: bool) -> None:
    """A fact told more than 20 messages back is out of the prompt: recall must still find it in this conversation,
    and prefer it to an older value told in another one."""
    app = make_app(faults={"long-conversation-forgets"} if faulty else set())
    conversation, say = chat_as(app.user("ana")[1])

    say(conversation(), "My order number is 4417.")
    cid = conversation()
    say(cid, "Actually, my order number is 5521.")
    for i in range(11):
        say(cid, f"Small talk number {i}.")
    answer = say(cid, "What is my order number?")
    assert answer == ("Your order number is 4417." if faulty else "Your order number is 5521.")


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_reopened_conversation_wins(make_app, faulty: bool) -> None:
    """A fact corrected in a newer conversation: an older conversation opened again must answer the correction."""
    app = make_app(faults={"reopened-conversation-wins"} if faulty else set())
    conversation, say = chat_as(app.user("ana")[1])

    first = conversation()
    say(first, "My order number is 4417.")
    say(conversation(), "Actually, my order number is 5521.")
    answer = say(first, "What is my order number?")
    assert answer == ("Your order number is 4417." if faulty else "Your order number is 5521.")
