"""Each switchable fault, at the level where it lives: the faulty app behaves differently from the clean one."""

from __future__ import annotations

import html
import random
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from memchat import assistant, corpus, legacy_store
from memchat.accounts import hash_password
from memchat.conversations import Message
from memchat.db import Pool
from memchat.faults import CATALOG, markdown_table
from memchat.memory_store import MemoryStore
from memchat.migration import migrate
from memchat.sign_ins import LOCKED_OUT, LOCKOUT_MINUTES, SIGN_IN_FAILURES
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
          "many-facts-lost", "ime-enter-sends", "write-held-back", "soft-delete-still-recalled",
          "edit-keeps-old-vector", "clear-all-users", "conversation-delete-keeps-messages", "memory-off-still-recalls",
          "memory-off-still-writes", "deleted-memory-returns", "memory-setting-not-saved",
          "migration-resurrects-deleted", "migration-local-times-as-utc", "writes-stall-after-error",
          "failed-send-resent", "memory-owner-from-body", "sign-in-matches-like", "lockout-never-expires",
          "lockout-matches-like", "message-kept-until-answered", "new-conversation-at-once",
          "offline-send-kept-silently", "busy-store-write-dropped",
          "conversation-list-by-creation", "title-follows-latest-message", "preview-shows-own-message",
          "preview-set-on-load-only"}


def test_every_fault_in_the_catalogue_has_a_test_here() -> None:
    assert set(CATALOG) == TESTED


def test_the_readme_lists_the_catalogue_as_the_faults_command_prints_it() -> None:
    assert markdown_table() in (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


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
    with closing(legacy_store.connect(redis_url)) as client, closing(Pool(db, size=2)) as pool:
        legacy_store.put(client, legacy_records(), "hash-ngram-v1")
        return migrate(client, pool, settings_for(db, faults=faults), batch_size=batch_size)


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


def test_migration_local_times_as_utc(pg_server, redis_server) -> None:
    times = {"z": "2024-05-08T13:56:00Z", "offset": "2024-05-08T19:26:00+05:30", "local": "2024-05-08T15:56:00"}
    created = {}
    for faults in (set(), {"migration-local-times-as-utc"}):
        db = pg_server.create_database()
        add_user(db, "u1", "x")
        with closing(legacy_store.connect(redis_server.new_url())) as client, closing(Pool(db, size=2)) as pool:
            legacy_store.declare_zone(client, "Europe/Berlin")
            legacy_store.put(client, [{"id": mid, "user_id": "u1", "text": f"My locker code is {n}.",
                                       "created_at": when} for n, (mid, when) in enumerate(times.items())],
                             "hash-ngram-v1")
            migrate(client, pool, settings_for(db, faults=faults), batch_size=7)
        created[bool(faults)] = {mid: fields[1] for mid, fields in _fields(db).items()}
    assert set(created[False].values()) == {datetime(2024, 5, 8, 13, 56, tzinfo=UTC)}
    assert created[True] == {"z": datetime(2024, 5, 8, 13, 56, tzinfo=UTC),  # UTC stays right
                             "offset": datetime(2024, 5, 8, 19, 26, tzinfo=UTC),
                             "local": datetime(2024, 5, 8, 15, 56, tzinfo=UTC)}


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


@pytest.mark.parametrize(("page", "fault", "key", "clean_value", "faulty_value"), [
    ("/", "write-held-back", "holdWrites", False, True),
    ("/", "many-facts-lost", "writeBatch", 50, 0),
    ("/", "ime-enter-sends", "enterSendsWhileComposing", False, True),
    ("/", "unload-write-lost", "flushOn", "pagehide", "beforeunload"),
    ("/", "write-race", "writeQueue", "append", "latest-only"),
    ("/", "sign-out-write-lost", "flushBeforeLogout", True, False),
    ("/", "title-splits-emoji", "titleByCharacters", True, False),
    ("/", "writes-stall-after-error", "pauseWritesAfterError", False, True),
    ("/", "failed-send-resent", "resendFailedSends", False, True),
    ("/", "message-kept-until-answered", "keepInputUntilAnswered", False, True),
    ("/", "new-conversation-at-once", "newConversationAtOnce", False, True),
    ("/", "offline-send-kept-silently", "keepOfflineSends", False, True),
    ("/", "preview-set-on-load-only", "updatePreview", True, False),
    ("/memories", "deleted-memory-returns", "deleteOptimistically", False, True),
    ("/memories", "memory-setting-not-saved", "saveMemorySetting", True, False),
])
def test_front_end_faults_are_chosen_by_the_page_config(make_app, page, fault, key, clean_value, faulty_value) -> None:
    configs = {}
    for faulty in (False, True):
        app = make_app(faults={fault} if faulty else set())
        _, client = app.user(f"u_{faulty}")
        configs[faulty] = page_config(client.get(page).text)
    assert configs[False][key] == clean_value and configs[True][key] == faulty_value
    same = {key}
    if page == "/":  # The regressions of a held-back write bring the hold back with them; nothing else changes.
        held_back = fault in HELD_BACK_WRITE_FAULTS
        assert (configs[False]["holdWrites"], configs[True]["holdWrites"]) == (False, held_back)
        same.add("holdWrites")
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


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_conversation_list_by_creation(make_app, faulty: bool) -> None:
    """Talking in the older of two conversations moves it to the top of the list (by last activity)."""
    app = make_app(faults={"conversation-list-by-creation"} if faulty else set(), settable_clock=True)
    client = app.user("ana")[1]
    conversation, say = chat_as(client)
    older, newer = conversation(), conversation()
    say(older, "Hello.")
    say(newer, "Hello again.")
    app.state.clock.advance(1 / 24)  # an hour later: the list orders by a clock, not by insertion
    say(older, "Back to this one.")
    listed = [c["id"] for c in client.get("/api/conversations").json()["conversations"]]
    assert listed == ([newer, older] if faulty else [older, newer])


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_title_follows_latest_message(make_app, faulty: bool) -> None:
    """A conversation keeps its first message as its title, whatever is said after it."""
    app = make_app(faults={"title-follows-latest-message"} if faulty else set())
    client = app.user("ana")[1]
    conversation, say = chat_as(client)
    cid = conversation()
    say(cid, "Plans for the weekend")
    say(cid, "And one more thing")
    titles = {c["id"]: c["title"] for c in client.get("/api/conversations").json()["conversations"]}
    assert titles[cid] == ("And one more thing" if faulty else "Plans for the weekend")


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_preview_shows_own_message(make_app, faulty: bool) -> None:
    """Each conversation in the list previews its last message, the assistant's reply, cut to 100 characters; an
    empty one previews nothing."""
    app = make_app(faults={"preview-shows-own-message"} if faulty else set())
    client = app.user("ana")[1]
    conversation, say = chat_as(client)
    cid, empty = conversation(), conversation()
    told = "My locker code is 5150. " + "é" * 120
    reply = say(cid, told)
    previews = {c["id"]: c["preview"] for c in client.get("/api/conversations").json()["conversations"]}
    assert previews == {cid: (told if faulty else reply)[:100], empty: ""}
    page = client.get(f"/c/{cid}").text
    assert f'data-testid="conversation-preview">{html.escape(previews[cid])}</p>' in page


# -- what users take back ---------------------------------------------------------------------------------------------


def ana_on(make_app, fault: str, faulty: bool) -> tuple:  # noqa: ANN001
    """An app with `fault` on (or not) and ana signed in: (app, her client, and chat_as's two helpers)."""
    app = make_app(faults={fault} if faulty else set())
    _, client = app.user("ana")
    return app, client, *chat_as(client)


def _rows(dsn: str, where: str = "true") -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        return {r[0]: r[1] for r in conn.execute(f"SELECT id, text FROM memories WHERE {where}").fetchall()}


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_soft_delete_still_recalled(make_app, faulty: bool) -> None:
    app, client, conversation, say = ana_on(make_app, "soft-delete-still-recalled", faulty)
    say(conversation(), "My dog's name is Rex.")
    [mid] = [m["id"] for m in client.get("/api/memories").json()["memories"]]
    assert client.delete(f"/api/memories/{mid}").status_code == 204
    assert client.get("/api/memories").json() == {"memories": []}  # gone from the list either way
    found = [r["id"] for r in client.get("/api/memories/search", params={"q": "My dog's name is Rex."}).json()[
        "results"]]
    answer = say(conversation(), "What is my dog's name?")
    if faulty:  # the row and its vector are still there, and still read by search and recall
        assert found == [mid] and answer == "Your dog's name is Rex." and mid in _rows(app.dsn)
    else:
        assert found == [] and answer == "I don't remember your dog's name." and _rows(app.dsn) == {}
    assert client.delete(f"/api/memories/{mid}").status_code == 404  # deleted once either way


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_edit_keeps_old_vector(db, make_store, faulty: bool) -> None:
    add_user(db, "u1", "x")
    store = make_store(faults={"edit-keeps-old-vector"} if faulty else set())
    [mid] = store.write("u1", None, ["My bike lock code is 1234."], NOW)
    edited = store.edit("u1", mid, "My favourite colour is teal.", NOW)
    assert edited is not None and edited["text"] == "My favourite colour is teal."  # the text changes either way
    new = [h.id for h in store.search("u1", "My favourite colour is teal.", NOW, fact_key="favourite colour")]
    old = [h.id for h in store.search("u1", "My bike lock code is 1234.", NOW)]
    assert (new, old) == (([], [mid]) if faulty else ([mid], []))


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_clear_all_users(db, make_store, faulty: bool) -> None:
    for uid in ("u1", "u2"):
        add_user(db, uid, "x")
    store = make_store(faults={"clear-all-users"} if faulty else set())
    store.write("u1", None, ["My dog's name is Rex.", "My car is a Fiat Panda."], NOW)
    [theirs] = store.write("u2", None, ["My dog's name is Luna."], NOW)
    assert store.clear("u1", NOW) == (3 if faulty else 2)
    assert store.list("u1", NOW) == []
    assert [m["id"] for m in store.list("u2", NOW)] == ([] if faulty else [theirs])


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_busy_store_write_dropped(db, make_store, faulty: bool) -> None:
    """A write while the memories are held as an index build holds them waits, and is kept once they are free; with
    the fault it gives up after a second and is answered as stored, with nothing kept."""
    add_user(db, "u1", "x")
    store = make_store(faults={"busy-store-write-dropped"} if faulty else set())
    with psycopg.connect(db) as holder, psycopg.connect(db, autocommit=True) as watcher:
        holder.execute("LOCK TABLE memories IN SHARE MODE")
        with ThreadPoolExecutor(1) as pool:
            written = pool.submit(store.write, "u1", None, ["My dog's name is Rex."], NOW)
            waiting = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation" \
                      " WHERE NOT l.granted AND c.relname = 'memories'"
            deadline = time.monotonic() + 10
            while not watcher.execute(waiting).fetchone()[0]:  # until the write waits on the table
                assert time.monotonic() < deadline, "the write never waited on the held table"
                time.sleep(0.05)  # the interval between two looks
            if faulty:
                assert written.result(timeout=10) == []  # given up while the table is still held
            holder.rollback()
            ids = written.result(timeout=10)
    assert [m["id"] for m in store.list("u1", NOW)] == ([] if faulty else ids)
    assert len(ids) == (0 if faulty else 1)


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_conversation_delete_keeps_messages(make_app, faulty: bool) -> None:
    app = make_app(faults={"conversation-delete-keeps-messages"} if faulty else set())
    _, client = app.user("ana")
    cid = client.post("/api/conversations", json={}).json()["conversation"]["id"]
    client.post(f"/api/conversations/{cid}/messages", json={"text": "My wifi password is hunter2."})
    assert client.delete(f"/api/conversations/{cid}").status_code == 204
    assert client.get("/api/conversations").json() == {"conversations": []}  # gone from the list either way
    api, page = client.get(f"/api/conversations/{cid}/messages"), client.get(f"/c/{cid}")
    with psycopg.connect(app.dsn) as conn:
        stored = conn.execute("SELECT count(*) FROM messages WHERE conversation_id = %s", (cid,)).fetchone()[0]
    if faulty:
        assert api.status_code == 200 and api.json()["messages"][0]["text"] == "My wifi password is hunter2."
        assert page.status_code == 200 and "hunter2" in page.text and stored == 2
    else:
        assert api.status_code == 404 and page.status_code == 404 and "hunter2" not in page.text and stored == 0
    assert client.delete(f"/api/conversations/{cid}").status_code == 404  # deleted once either way


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_memory_off_still_recalls(make_app, faulty: bool) -> None:
    app, client, conversation, say = ana_on(make_app, "memory-off-still-recalls", faulty)
    say(conversation(), "My locker number is 42.")
    client.put("/api/settings", json={"memory": False})
    cid = conversation()
    turn = client.post(f"/api/conversations/{cid}/messages", json={"text": "What is my locker number?"}).json()
    assert [r["text"] for r in turn["recalled"]] == (["My locker number is 42."] if faulty else [])
    assert turn["reply"]["text"] == ("Your locker number is 42." if faulty else "I don't remember your locker number.")
    say(cid, "My shoe size is 38.")
    assert [m["text"] for m in client.get("/api/memories").json()["memories"]] == [
        "My locker number is 42."]  # the writes stay off either way


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_memory_off_still_writes(make_app, faulty: bool) -> None:
    app, client, conversation, say = ana_on(make_app, "memory-off-still-writes", faulty)
    client.put("/api/settings", json={"memory": False})
    cid = conversation()
    turn = client.post(f"/api/conversations/{cid}/messages", json={"text": "My shoe size is 38."}).json()
    assert turn["remember"] == (["My shoe size is 38."] if faulty else [])
    write = client.post("/api/memories", json={"conversation_id": cid, "items": ["My shoe size is 38."]})
    assert write.status_code == (201 if faulty else 409)
    assert say(conversation(), "What is my shoe size?") == "I don't remember your shoe size."  # recall stays off
    client.put("/api/settings", json={"memory": True})
    assert say(conversation(), "What is my shoe size?") == (
        "Your shoe size is 38." if faulty else "I don't remember your shoe size.")


def test_the_memories_page_faults_live_in_its_script(make_app) -> None:
    """What each switch does is in memories.js: the optimistic delete sends a key the item does not have, and the
    switch that is not saved sends nothing."""
    js = make_app().client().get("/static/memories.js").text
    optimistic = js[js.index("if (cfg.deleteOptimistically)"):js.index("try {", js.index("cfg.deleteOptimistically"))]
    assert "item.remove()" in optimistic and '"/api/memories/" + item.dataset.id' in optimistic
    assert "item.dataset.memoryId" not in optimistic and ".catch(() => {})" in optimistic
    not_saved = js[js.index("if (!cfg.saveMemorySetting)"):js.index("toggle.disabled = true")]
    assert "request(" not in not_saved and "fetch(" not in not_saved and "return;" in not_saved


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_migration_resurrects_deleted(db, redis_url, faulty: bool) -> None:
    """Migrated memories their owners then deleted (one of u2's, all of u1's), and the migration run again."""
    _migrate(db, redis_url, 7, set())
    with closing(legacy_store.connect(redis_url)) as client, closing(Pool(db, size=2)) as pool:
        store = MemoryStore(pool, settings_for(db))
        assert store.delete("u2", "lg_001", NOW)
        cleared = store.clear("u1", NOW)
        faults = {"migration-resurrects-deleted"} if faulty else set()
        again = migrate(client, pool, settings_for(db, faults=faults), batch_size=7)
    owners = set(_owners(db).values())
    if faulty:  # every deleted memory is back
        assert "lg_001" in _rows(db) and owners == {"u1", "u2"}
        assert (again.written, again.skipped_deleted) == (1 + cleared, 0)
    else:
        assert "lg_001" not in _rows(db) and owners == {"u2"}
        assert (again.written, again.skipped_deleted) == (0, 1 + cleared)


def _owners(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        return {r[0]: r[1] for r in conn.execute("SELECT id, user_id FROM memories").fetchall()}


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_memory_owner_from_body(make_app, faulty: bool) -> None:
    app = make_app(faults={"memory-owner-from-body"} if faulty else set())
    _, ana = app.user("ana")
    _, ben = app.user("ben")
    [mid] = ana.post("/api/memories", json={"items": ["My bank PIN is 8080."]}).json()["stored"]
    written = ben.post("/api/memories", json={"items": ["My bank PIN is 1111."], "user_id": "ana"})
    edited = ben.put(f"/api/memories/{mid}", json={"text": "My bank PIN is 0000.", "user_id": "ana"})
    anas = [m["text"] for m in ana.get("/api/memories").json()["memories"]]
    if faulty:
        assert edited.status_code == 200 and anas == ["My bank PIN is 0000.", "My bank PIN is 1111."]
    else:
        assert edited.status_code == 404 and anas == ["My bank PIN is 8080."]
        assert written.status_code == 201  # the body's user_id is ignored: Ben wrote to his own memory
        assert [m["text"] for m in ben.get("/api/memories").json()["memories"]] == ["My bank PIN is 1111."]


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_sign_in_matches_like(make_app, password_hash: str, faulty: bool) -> None:
    app = make_app(faults={"sign-in-matches-like"} if faulty else set())
    hashed = hash_password("older-password")
    add_user(app.dsn, "older", hashed, "ana11@x.test")
    add_user(app.dsn, "newer", password_hash, "ana_1@x.test")
    answer = app.client().post("/api/login", json={"email": "ana_1@x.test", "password": PASSWORD})
    assert answer.status_code == (401 if faulty else 200)  # faulty: the older ana11's password is checked


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_lockout_never_expires(make_app, faulty: bool) -> None:
    app = make_app(faults={"lockout-never-expires"} if faulty else set(), settable_clock=True)
    email, _ = app.user("ana")
    client = app.client()
    for _ in range(SIGN_IN_FAILURES):
        assert client.post("/api/login", json={"email": email, "password": "wrong-password"}).status_code == 401
    locked = client.post("/api/login", json={"email": email, "password": PASSWORD})
    assert locked.status_code == 429 and locked.json()["error"] == LOCKED_OUT  # even the right password
    app.state.clock.advance((LOCKOUT_MINUTES + 1) / (24 * 60))
    again = client.post("/api/login", json={"email": email, "password": PASSWORD})
    assert again.status_code == (429 if faulty else 200)


@pytest.mark.parametrize("faulty", [False, True], ids=["clean", "fault"])
def test_lockout_matches_like(make_app, password_hash: str, faulty: bool) -> None:
    """ana11's lockout is hers only: ana_1's address, read as a pattern, matches ana11's with the fault on."""
    app = make_app(faults={"lockout-matches-like"} if faulty else set())
    add_user(app.dsn, "ana11", password_hash, "ana11@x.test")
    add_user(app.dsn, "ana_1", password_hash, "ana_1@x.test")
    for _ in range(SIGN_IN_FAILURES):
        app.client().post("/api/login", json={"email": "ana11@x.test", "password": "wrong-password"})
    assert app.client().post("/api/login", json={"email": "ana11@x.test", "password": PASSWORD}).status_code == 429
    answer = app.client().post("/api/login", json={"email": "ana_1@x.test", "password": PASSWORD})
    assert answer.status_code == (429 if faulty else 200)


def test_sign_in_lockout_is_per_account_and_address(make_app) -> None:
    """Wrong passwords from one address lock that account from that address only, and never another account."""
    app = make_app()
    email, _ = app.user("ana")
    other, _ = app.user("ben")
    for _ in range(SIGN_IN_FAILURES - 1):
        app.client().post("/api/login", json={"email": email, "password": "wrong-password"})
    assert app.client().post("/api/login", json={"email": email, "password": PASSWORD}).status_code == 200
    for _ in range(SIGN_IN_FAILURES):  # the right password above cleared the count
        app.client().post("/api/login", json={"email": email, "password": "wrong-password"})
    assert app.client().post("/api/login", json={"email": email, "password": PASSWORD}).status_code == 429
    assert app.client().post("/api/login", json={"email": other, "password": PASSWORD}).status_code == 200
