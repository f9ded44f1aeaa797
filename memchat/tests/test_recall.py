"""Recall (MemoryStore.search and GET /api/memories/search): scoping, ordering, threshold, k, and the rows it skips."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from memchat.embedders import get_embedder
from memchat.tests.helpers import add_user, brute_force, owner_rows

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
V1 = get_embedder("hash-ngram-v1")

# Every path through search: exact scan, and the ANN index for owners with at least ann_min_rows rows.
PATHS = {
    "exact": {"index": "none"},
    "hnsw-ann": {"index": "hnsw", "ann_min_rows": 1},
    "ivfflat-ann": {"index": "ivfflat", "ann_min_rows": 1},
}


def users(dsn: str, *ids: str) -> None:
    for uid in ids:
        add_user(dsn, uid, "x")


@pytest.mark.parametrize("path", list(PATHS))
def test_recall_is_scoped_to_the_owner_even_for_near_colliding_ids(db, make_store, path: str) -> None:
    ids = ["u1", "u11", "u1_", "U1", "u111", "1"]
    users(db, *ids)
    store = make_store(**PATHS[path])
    colours = ["teal", "crimson", "amber", "indigo", "olive", "coral"]
    written = {uid: store.write(uid, None, [f"My favourite colour is {c}."], NOW)[0] for uid, c in zip(ids, colours,
                                                                                                     strict=True)}
    store.build_index()
    for uid in ids:
        hits = store.search(uid, "What is my favourite colour?", NOW, k=100)
        assert [h.id for h in hits] == [written[uid]], f"{uid} recalled {[h.text for h in hits]}"


def test_recall_through_the_api_is_scoped_to_the_logged_in_user(make_app) -> None:
    app = make_app()
    _, u1 = app.user("u1")
    _, u11 = app.user("u11")
    assert u11.post("/api/memories", json={"items": ["My dog is called Rex."]}).status_code == 201
    assert u1.post("/api/memories", json={"items": ["My dog is called Luna."]}).status_code == 201
    for client, name in ((u1, "Luna"), (u11, "Rex")):
        results = client.get("/api/memories/search", params={"q": "What is my dog called?", "k": 100}).json()
        assert [r["text"] for r in results["results"]] == [f"My dog is called {name}."]
        listed = client.get("/api/memories").json()["memories"]
        assert [m["text"] for m in listed] == [f"My dog is called {name}."]


@pytest.mark.parametrize("path", list(PATHS))
def test_best_first_and_equal_scores_by_id(db, make_store, path: str) -> None:
    users(db, "u1")
    store = make_store(**PATHS[path])
    texts = ["My favourite colour is teal.", "Remember that my favourite colour is teal",
             "favourite colour: teal", "The colour I like best is teal", "My favourite colour is teal!",
             "my favourite colour is TEAL", "My dentist appointment is on Monday."]
    store.write("u1", None, texts, NOW)
    hits = store.search("u1", "favourite colour teal", NOW, k=100)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    ids, vectors = owner_rows(db, "u1", V1.name, NOW)
    want = brute_force(ids, vectors, V1.embed("favourite colour teal"), 100, store.settings.effective_threshold)
    assert sorted(h.id for h in hits) == sorted(i for i, _ in want)
    assert [h.id for h in hits] == [i for i, _ in want]
    # three texts embed identically (case and punctuation do not count): their equal scores come in id order
    same = [h.id for h in hits if h.text.lower().strip(".!") == "my favourite colour is teal"]
    assert len(same) == 3 and same == sorted(same)
    assert "My dentist appointment is on Monday." not in [h.text for h in hits]


def test_k_limits_the_results_and_defaults_to_top_k(db, make_store) -> None:
    users(db, "u1")
    store = make_store(top_k=3)
    store.write("u1", None, [f"My favourite colour is {c}." for c in ("teal", "red", "blue", "gold", "pink")], NOW)
    assert len(store.search("u1", "What is my favourite colour?", NOW)) == 3
    assert len(store.search("u1", "What is my favourite colour?", NOW, k=1)) == 1
    assert len(store.search("u1", "What is my favourite colour?", NOW, k=50)) == 5


def test_the_newest_statement_of_the_asked_fact_is_recalled_even_when_outranked(db, make_store) -> None:
    users(db, "u1")
    store = make_store(top_k=2)
    older = [f"My vet is Doctor {name}." for name in ("Ames", "Bell", "Cole")]
    store.write("u1", None, older, NOW)
    [newest] = store.write("u1", None, ["Correction: my vet is C:\\Users\\james\\executive."],
                           NOW + timedelta(days=1))
    question = "What is my vet?"
    assert newest not in [h.id for h in store.search("u1", question, NOW + timedelta(days=1))]  # outranked
    hits = store.search("u1", question, NOW + timedelta(days=1), fact_key="vet")
    assert len(hits) == 3 and hits[-1].id == newest
    strict = make_store(top_k=2, threshold=0.99)  # below the threshold too: the same fact, by its key
    assert [h.id for h in strict.search("u1", question, NOW + timedelta(days=1), fact_key="vet")] == [newest]


def test_threshold_keeps_exactly_the_rows_at_or_above_it(db, make_store) -> None:
    users(db, "u1")
    texts = ["My favourite colour is teal.", "I would always pick teal as my favourite colour",
             "The colour I like best is teal", "teal", "My favourite book is Dune.", "My dentist is on Monday."]
    q = "What is my favourite colour?"
    scores = {t: float(V1.embed(t) @ V1.embed(q)) for t in texts}
    # the texts straddle each threshold tried below
    for threshold in (0.1, 0.25, 0.5):
        assert any(s >= threshold for s in scores.values()) and any(s < threshold for s in scores.values())
    make_store().write("u1", None, texts, NOW)
    for threshold in (0.1, 0.25, 0.5):
        hits = make_store(threshold=threshold).search("u1", q, NOW, k=100)
        assert {h.text for h in hits} == {t for t, s in scores.items() if s >= threshold - 1e-6}
        assert all(h.score >= threshold for h in hits)


@pytest.mark.parametrize("path", list(PATHS))
def test_expired_rows_are_skipped(db, make_store, path: str) -> None:
    users(db, "u1")
    store = make_store(ttl_days=30, **PATHS[path])
    [mid] = store.write("u1", None, ["My bike lock code is 4471."], NOW)
    store.build_index()
    q = "What is my bike lock code?"
    assert [h.id for h in store.search("u1", q, NOW + timedelta(days=29, hours=23))] == [mid]
    assert store.search("u1", q, NOW + timedelta(days=30)) == []  # expires_at > now, strictly
    assert store.search("u1", q, NOW + timedelta(days=400)) == []
    with psycopg.connect(db, autocommit=True) as conn:  # a migrated legacy row may carry no expiry at all
        conn.execute("UPDATE memories SET expires_at = NULL WHERE id = %s", (mid,))
    assert [h.id for h in store.search("u1", q, NOW + timedelta(days=4000))] == [mid]


@pytest.mark.parametrize("path", list(PATHS))
def test_rows_without_embedding_or_from_another_model_are_skipped(db, make_store, path: str) -> None:
    users(db, "u1")
    store = make_store(**PATHS[path])
    keep, nulled = store.write("u1", None, ["My bike lock code is 4471.", "My bike lock code is 0912."], NOW)
    [other_model] = make_store(embedder="hash-ngram-v2").write("u1", None, ["My bike lock code is 3306."], NOW)
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("UPDATE memories SET embedding = NULL WHERE id = %s", (nulled,))
    store.build_index()
    hits = store.search("u1", "What is my bike lock code?", NOW, k=100)
    assert [h.id for h in hits] == [keep]
    assert other_model not in [h.id for h in make_store(embedder="hash-ngram-v1").search(
        "u1", "bike lock code 3306", NOW, k=100)]


def test_a_memory_without_content_words_is_stored_but_never_recalled(db, make_store) -> None:
    users(db, "u1")
    store = make_store()
    [mid] = store.write("u1", None, ["and so it is, is it?"], NOW)
    with psycopg.connect(db) as conn:
        assert conn.execute("SELECT embedding IS NULL FROM memories WHERE id = %s", (mid,)).fetchone()[0]
    assert store.search("u1", "so it is", NOW) == []  # a query without content words recalls nothing either
    assert store.search("u1", "what is it", NOW) == []


def test_exclude_conversation_hides_only_that_conversation(db, make_store) -> None:
    users(db, "u1")
    with psycopg.connect(db, autocommit=True) as conn:
        for cid in ("c_a", "c_b"):
            conn.execute("INSERT INTO conversations (id, user_id, title, created_at, updated_at)"
                         " VALUES (%s, 'u1', '', %s, %s)", (cid, NOW, NOW))
    store = make_store()
    [in_a] = store.write("u1", "c_a", ["My car is a Volvo V60."], NOW)
    [in_b] = store.write("u1", "c_b", ["I drive a Volvo V60 car"], NOW)
    [nowhere] = store.write("u1", None, ["car model: Volvo V60"], NOW)
    q = "What car do I drive?"
    assert {h.id for h in store.search("u1", q, NOW, k=10)} == {in_a, in_b, nowhere}
    assert {h.id for h in store.search("u1", q, NOW, k=10, exclude_conversation="c_a")} == {in_b, nowhere}


def test_a_memory_written_without_a_conversation_is_recalled_through_the_api(make_app) -> None:
    """Regression: search used `conversation_id IS DISTINCT FROM NULL` when nothing was excluded, which hid every
    memory without a conversation (API writes without conversation_id, migrated legacy rows)."""
    app = make_app()
    _, client = app.user("u1")
    stored = client.post("/api/memories", json={"items": ["My wifi password is kettle77."]}).json()["stored"]
    results = client.get("/api/memories/search", params={"q": "What is my wifi password?"}).json()["results"]
    assert [r["id"] for r in results] == stored
    assert results[0]["conversation_id"] is None


def test_a_reply_recalls_memories_of_other_conversations_and_its_own(make_app) -> None:
    app = make_app()
    _, client = app.user("u1")
    first = client.post("/api/conversations", json={"title": "one"}).json()["conversation"]["id"]
    turn = client.post(f"/api/conversations/{first}/messages", json={"text": "My favourite colour is teal."}).json()
    assert turn["remember"] == ["My favourite colour is teal."]
    [mid] = client.post("/api/memories", json={"conversation_id": first, "items": turn["remember"]}).json()["stored"]
    second = client.post("/api/conversations", json={}).json()["conversation"]["id"]
    answer = client.post(f"/api/conversations/{second}/messages", json={"text": "What is my favourite colour?"}).json()
    assert answer["reply"]["text"] == "Your favourite colour is teal."
    assert [r["id"] for r in answer["recalled"]] == [mid]
    # the conversation that holds it recalls it too: a long conversation's early turns leave the context window
    again = client.post(f"/api/conversations/{first}/messages", json={"text": "What is my favourite colour?"}).json()
    assert [r["id"] for r in again["recalled"]] == [mid] and again["reply"]["text"] == "Your favourite colour is teal."
