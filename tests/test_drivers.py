"""The app drivers' own logic, without an app: loading by name, what each declares, and how the Open WebUI driver
reads its app's answers and applies its misconfigurations. Against running apps they are exercised by the features
(`make test`, `make test-open-webui`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from harness.app.app_launcher import RunningApp
from harness.app.target import load_target
from harness.drivers import load_driver, shipped_drivers
from harness.drivers.base import Account, AppLacks, Capability, DriverError, Hit
from harness.drivers.letta import LettaDriver, LettaSession
from harness.drivers.letta.api import _is_turn, letta_pg_uri
from harness.drivers.open_webui import (
    MISCONFIGURATIONS,
    OpenWebUIDriver,
    OpenWebUISession,
    Reviews,
    hits_of,
    shown_branch,
    tokens_in,
)
from harness.drivers.open_webui.store import MemoryRow, count_by_owner, epoch, insert_memories, iso, read_memories
from harness.vocabulary.polling import Timeout
from harness.vocabulary.turn import Turn
from model_server.client import ModelServer


def test_every_shipped_target_loads_its_driver() -> None:
    assert {"memchat", "open-webui", "letta"} <= set(shipped_drivers())
    for name in ("memchat", "open-webui", "open-webui-pgvector", "letta"):
        target = load_target(name)
        assert load_driver(target).name == target.driver


def test_the_reference_app_offers_every_capability_but_an_upgrade_and_open_webui_only_its_own() -> None:
    assert load_driver(load_target("memchat")).capabilities == frozenset(Capability) - {Capability.APP_UPGRADE}
    owui = load_driver(load_target("open-webui")).capabilities
    assert Capability.SERVER_SIGN_OUT in owui and Capability.EMBEDDING_MODEL_CHANGE in owui
    assert not {Capability.REQUESTED_USER_IDS, Capability.MOVABLE_CLOCK, Capability.MIGRATION_TOOLS} & owui


def test_an_unknown_fault_is_one_line_naming_the_catalogue() -> None:
    driver = load_driver(load_target("open-webui"))
    with pytest.raises(DriverError) as info:
        driver.check_faults(["no-such-fault"])
    assert "no-such-fault" in str(info.value) and "memories-off" in str(info.value)
    assert "\n" not in str(info.value)
    driver.check_faults(list(MISCONFIGURATIONS))


def test_the_shown_branch_follows_parents_from_the_current_message() -> None:
    history = {"currentId": "a2", "messages": {
        "u1": {"role": "user", "content": "My dog is Rex.", "parentId": None},
        "a1": {"role": "assistant", "content": "Noted.", "parentId": "u1"},
        "a1b": {"role": "assistant", "content": "Regenerated, not shown.", "parentId": "u1"},
        "u2": {"role": "user", "content": "What is my dog?", "parentId": "a1"},
        "a2": {"role": "assistant", "content": "Your dog is Rex.", "parentId": "u2"}}}
    assert shown_branch(history) == [Turn("user", "My dog is Rex."), Turn("assistant", "Noted."),
                                     Turn("user", "What is my dog?"), Turn("assistant", "Your dog is Rex.")]
    assert shown_branch({}) == []


def test_query_results_become_hits_best_first_scored_by_cosine() -> None:
    """Open WebUI scores (1 + cosine) / 2 in both its vector stores: 1.0 is its own text, 0.5 orthogonal."""
    result = {"ids": [["m1", "m2", "m3"]], "documents": [["My dog is Rex.", "My cat is Tom.", "Taxes."]],
              "distances": [[1.0, 0.5, 0.25]], "metadatas": [[{}, {}, {}]]}
    assert hits_of(result) == [Hit("m1", 1.0, "My dog is Rex."), Hit("m2", 0.0, "My cat is Tom."),
                               Hit("m3", -0.5, "Taxes.")]
    assert hits_of(None) == [] and hits_of({"ids": [[]], "documents": [[]], "distances": [[]]}) == []


def test_tokens_come_from_local_storage_of_the_app_and_the_cookie() -> None:
    state = {"cookies": [{"name": "token", "value": "c"}, {"name": "other", "value": "x"}],
             "origins": [{"origin": "http://a", "localStorage": [{"name": "token", "value": "l"}]},
                         {"origin": "http://b", "localStorage": [{"name": "token", "value": "elsewhere"}]}]}
    assert tokens_in(state, "http://a") == ["l", "c"]


def test_misconfigurations_reach_the_apps_environment(tmp_path: Path) -> None:
    driver = load_driver(load_target("open-webui"))
    assert isinstance(driver, OpenWebUIDriver)
    model = ModelServer("http://127.0.0.1:9/v1")
    env = driver._env(1, model, tmp_path, "s", "postgresql://p/db", "redis://r/1",
                      {"faults": "memories-off,no-redis", "embedder": "hash-ngram-v2"})
    assert env["ENABLE_MEMORIES"] == "false" and env["REDIS_URL"] == ""
    assert env["RAG_EMBEDDING_MODEL"] == "hash-ngram-v2" and env["OPENAI_API_BASE_URL"] == model.base_url
    assert "DATABASE_URL" not in env
    clean = driver._env(1, model, tmp_path, "s", "postgresql://p/db", "redis://r/1", {})
    assert clean["ENABLE_MEMORIES"] == "true" and clean["REDIS_URL"] == "redis://r/1"
    assert clean["MEMORIES_REVIEW_INTERVAL_TURNS"] == "1"
    on_postgres = load_driver(load_target("open-webui-pgvector"))._env(1, model, tmp_path, "s", "postgresql://p/db",
                                                                        "redis://r/1", {})
    assert on_postgres["DATABASE_URL"] == on_postgres["PGVECTOR_DB_URL"] == "postgresql://p/db"
    assert on_postgres["VECTOR_DB"] == "pgvector"


def test_letta_offers_chatting_restarts_and_its_store_but_no_scores_nor_sessions() -> None:
    driver = load_driver(load_target("letta"))
    assert driver.capabilities == {Capability.CHAT_API, Capability.RESTART, Capability.DATABASE_ACCESS,
                                   Capability.MEMORY_SEARCH, Capability.APP_SETTINGS, Capability.MEMORY_DELETE,
                                   Capability.MEMORY_CLEAR, Capability.CONVERSATION_DELETE,
                                   Capability.MEMORY_REMAINS, Capability.ACCOUNT_REMAINS}  # both parts of its reads
    with pytest.raises(DriverError) as info:
        driver.browser_state(None, None)  # type: ignore[arg-type]
    assert "no web page" in str(info.value)
    made_up = driver.made_up_credentials(None, {"user_id": "user-1"})  # type: ignore[arg-type]
    assert set(made_up) == {"user_id"} and re.fullmatch(r"user-[0-9a-f-]{36}", made_up["user_id"])
    assert made_up != driver.made_up_credentials(None, {"user_id": "user-1"})  # type: ignore[arg-type]


def test_letta_declares_what_its_code_does_with_a_deleted_conversations_memories_and_no_memory_switch() -> None:
    forgetting = load_target("letta").forgetting
    assert forgetting.conversation_deleted is not None and forgetting.conversation_deleted.memories == "kept"
    assert "conversation_manager.py" in forgetting.conversation_deleted.source
    assert forgetting.memory_on_again is None  # Letta has no switch that turns an agent's memory off


def _letta_session(handler: Callable[[httpx.Request], httpx.Response]) -> LettaSession:
    session = LettaSession(RunningApp("http://letta", {}), Account("user-1", "ana@example.com", "", "Ana"),
                           "agent-1", lambda other: pytest.fail("no other user's session is needed"))
    session.http = httpx.Client(base_url="http://letta", headers={"user_id": "user-1"},
                                transport=httpx.MockTransport(handler))
    return session


def test_letta_takes_memories_back_through_its_own_routes_clearing_them_one_by_one_over_every_page() -> None:
    passages = [{"id": f"passage-{n:03}", "text": f"fact {n}"} for n in range(150)]
    deleted: list[str] = []

    def letta(request: httpx.Request) -> httpx.Response:
        assert request.headers["user_id"] == "user-1"
        path = request.url.path
        if request.method == "GET" and path == "/v1/agents/agent-1/archival-memory":
            left = [p for p in passages if p["id"] not in deleted]
            after = request.url.params.get("after")
            start = next((i + 1 for i, p in enumerate(left) if p["id"] == after), 0)
            return httpx.Response(200, json=left[start:start + int(request.url.params["limit"])])
        passage = path.removeprefix("/v1/agents/agent-1/archival-memory/")
        if request.method == "DELETE" and passage in {p["id"] for p in passages} - set(deleted):
            deleted.append(passage)
            return httpx.Response(200, json={"message": f"Memory id={passage} successfully deleted"})
        if request.method == "DELETE" and path == "/v1/conversations/conv-1":
            return httpx.Response(200)
        return httpx.Response(404, json={"detail": f"no {request.method} {path}"})

    session = _letta_session(letta)
    session.delete_memory("passage-007")
    assert deleted == ["passage-007"]
    session.clear_memories()
    assert sorted(deleted) == [p["id"] for p in passages] and len(deleted) == len(set(deleted))
    session.delete_conversation("conv-1")
    with pytest.raises(DriverError, match="deleting Ana <ana@example.com>'s archival memory passage-x: HTTP 404"):
        session.delete_memory("passage-x")
    with pytest.raises(DriverError, match="cannot edit a memory"):
        session.edit_memory("passage-001", "new text")
    with pytest.raises(DriverError, match="cannot turn memory off or on"):
        session.set_memory(False)


@pytest.mark.parametrize(("dsn", "uri"), [
    # the embedded provider's socket DSN: Letta would read the user as the host and connect as the OS user
    ("postgresql://postgres:@/memtest_db?host=/tmp/memtest-db-x/pg",
     "postgresql://postgres@localhost/memtest_db?host=/tmp/memtest-db-x/pg"),
    ("host=/tmp/s port=5544 dbname=d user=postgres", "postgresql://postgres@localhost:5544/d?host=/tmp/s"),
    ("postgresql://u:p%40ss@127.0.0.1:5433/db?sslmode=disable", "postgresql://u:p%40ss@127.0.0.1:5433/db"),
    ("postgresql://test:test@localhost:32771/test", "postgresql://test:test@localhost:32771/test"),
])
def test_letta_gets_a_database_uri_that_survives_its_rebuild(dsn: str, uri: str) -> None:
    assert letta_pg_uri(dsn) == uri


def test_letta_starts_with_what_isolation_rests_on_whatever_the_target_says(tmp_path: Path) -> None:
    driver = load_driver(load_target("letta"))
    assert isinstance(driver, LettaDriver)
    driver.target.env["LETTA_NO_DEFAULT_ACTOR"] = "false"
    env = driver._env(tmp_path, "postgresql://postgres:@/db?host=/s", "http://127.0.0.1:9/v1", [])
    assert env["LETTA_NO_DEFAULT_ACTOR"] == "true" and env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert env["HOME"] == str(tmp_path / "home") and env["LETTA_DIR"] == str(tmp_path / "letta")
    assert env["LETTA_PG_URI"] == "postgresql://postgres@localhost/db?host=/s" and env["ORT_DISABLE_TELEMETRY"] == "1"
    with pytest.raises(DriverError, match="takes no settings but faults, not embedder"):
        driver.start(pg_dsn="", redis_url="", settings={"embedder": "hash-ngram-v2"}, log_path=tmp_path / "log")


def test_letta_misconfigured_as_its_catalogue_says(tmp_path: Path) -> None:
    """Its fault default-actor-on runs Letta as it ships: without the setting that refuses unknown user ids; an
    unknown fault is refused in one line naming the catalogue."""
    driver = load_driver(load_target("letta"))
    assert isinstance(driver, LettaDriver)
    assert [f["name"] for f in driver.fault_catalogue()] == [
        "default-actor-on", "one-organization", "agent-without-archival-tools"]
    env = driver._env(tmp_path, "postgresql://postgres:@/db?host=/s", "http://127.0.0.1:9/v1", ["default-actor-on"])
    assert "LETTA_NO_DEFAULT_ACTOR" not in env
    with pytest.raises(DriverError, match="unknown fault.* no-such for letta; its catalogue has: agent-without"):
        driver.start(pg_dsn="", redis_url="", settings={"faults": "no-such"}, log_path=tmp_path / "log")


def test_letta_turns_are_the_users_and_assistants_messages_not_its_own_events() -> None:
    heartbeat = {"message_type": "user_message", "content": '{"type": "heartbeat", "reason": "Continuing."}'}
    typed = {"message_type": "user_message", "content": [{"type": "text", "text": '{"type": "note"} mine'}]}
    said = {"message_type": "assistant_message", "content": "Noted."}
    tool = {"message_type": "tool_call_message", "tool_call": {"name": "archival_memory_insert"}}
    assert [_is_turn(m) for m in (heartbeat, typed, said, tool)] == [False, True, True, False]


# Open WebUI 0.11.4's and 0.12.4's table, as their alembic chain creates it in SQLite
OPEN_WEBUI_MEMORY = """CREATE TABLE memory (id VARCHAR NOT NULL, user_id VARCHAR, content TEXT, updated_at BIGINT,
    created_at BIGINT, type VARCHAR DEFAULT 'context' NOT NULL, path TEXT, meta JSON, PRIMARY KEY (id))"""


def test_a_history_written_into_open_webuis_memory_table_reads_back_with_its_ids_owners_and_times(
        tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "webui.db") as conn:
        conn.execute(OPEN_WEBUI_MEMORY)
    app = RunningApp("http://127.0.0.1:1", {}, data_dir=tmp_path)
    rows = [MemoryRow(f"t-h{i:06d}", f"user-{i % 3}", f"My locker code is {i}.", epoch("2024-02-29T23:59:59+00:00"))
            for i in range(1203)]  # more than one batch of SQLite's bound parameters
    insert_memories(app, False, rows)
    found = read_memories(app, False, [r.id for r in rows] + ["t-missing"])
    assert found == {r.id: r for r in rows}
    assert iso(found["t-h000007"].created_at) == "2024-02-29T23:59:59+00:00"
    assert count_by_owner(app, False, ["user-0", "user-1", "user-2", "nobody"]) == {
        "user-0": 401, "user-1": 401, "user-2": 401}
    with sqlite3.connect(tmp_path / "webui.db") as conn:
        assert conn.execute("SELECT DISTINCT type, path, meta, updated_at = created_at FROM memory").fetchall() == [
            ("context", None, '{"created_by": "memtest-import"}', 1)]


def test_open_webuis_store_without_a_database_is_named_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(DriverError, match=r"^Open WebUI's database .*webui.db does not exist: give the suite an app"):
        read_memories(RunningApp("http://127.0.0.1:1", {}, data_dir=tmp_path), False, ["x"])


TAKING_BACK = {Capability.MEMORY_DELETE, Capability.MEMORY_EDIT, Capability.MEMORY_CLEAR,
               Capability.CONVERSATION_DELETE, Capability.MEMORY_SWITCH}


def test_open_webui_offers_every_take_back_move_and_declares_what_its_code_does() -> None:
    for name in ("open-webui", "open-webui-pgvector"):
        target = load_target(name)
        capabilities = load_driver(target).capabilities
        assert TAKING_BACK | {Capability.MEMORY_REMAINS} <= capabilities
        assert Capability.DATABASE_ACCESS not in capabilities  # it reads only what users took back of its store
        deleted, again = target.forgetting.conversation_deleted, target.forgetting.memory_on_again
        assert deleted is not None and deleted.memories == "kept" and "routers/chats.py" in deleted.source
        assert again is not None and again.memories == "used again" and "utils/memory.py" in again.source
    chroma_only = "forgetting.feature: A memory Ana deletes is forgotten, and nobody else's memory changes"
    assert chroma_only in load_target("open-webui").known_defects
    assert chroma_only not in load_target("open-webui-pgvector").known_defects  # taken back with an empty reason


def _open_webui_session(handler: Callable[[httpx.Request], httpx.Response]) -> OpenWebUISession:
    session = OpenWebUISession(RunningApp("http://owui", {}), Account("user-1", "ana@example.com", "pw", "Ana"),
                               "token-1", None)
    session.http = httpx.Client(base_url="http://owui", transport=httpx.MockTransport(handler))
    return session


def test_open_webui_takes_memory_back_through_the_routes_its_page_calls() -> None:
    calls: list[tuple[str, str, bytes]] = []

    def owui(request: httpx.Request) -> httpx.Response:
        calls.append((request.method, request.url.path, request.content))
        if request.url.path.endswith("/update") and request.url.path.startswith("/api/v1/memories/"):
            return httpx.Response(200, json={"id": "m-1", "content": "My locker code is 5150."})
        if request.url.path == "/api/v1/users/user/settings/update":
            return httpx.Response(200, json={"ui": {"richTextInput": False, "memory": False}})
        answer = request.url.path not in ("/api/v1/memories/m-other", "/api/v1/chats/c-other")
        return httpx.Response(200, json=answer)

    session = _open_webui_session(owui)
    session.delete_memory("m-1")
    session.edit_memory("m-1", "My locker code is 5150.")
    session.clear_memories()
    session.delete_conversation("c-1")
    session.set_memory(False)
    assert [(method, path) for method, path, _ in calls] == [
        ("DELETE", "/api/v1/memories/m-1"), ("POST", "/api/v1/memories/m-1/update"),
        ("DELETE", "/api/v1/memories/delete/user"), ("DELETE", "/api/v1/chats/c-1"),
        ("POST", "/api/v1/users/user/settings/update")]
    assert calls[1][2] == b'{"content":"My locker code is 5150."}' and calls[4][2] == b'{"ui":{"memory":false}}'
    assert session.reviews.memory_on is False
    with pytest.raises(DriverError, match="^Open WebUI deleted no memory m-other of Ana <ana@example.com>"):
        session.delete_memory("m-other")
    with pytest.raises(DriverError, match="^Open WebUI did not delete chat c-other"):
        session.delete_conversation("c-other")
    with pytest.raises(DriverError, match="memory switch"):
        session.set_memory(True)  # the app answered the switch still off


def test_open_webui_settle_waits_for_no_review_of_the_turns_sent_with_memory_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reviews: list[dict] = []
    monkeypatch.setattr(ModelServer, "reviews", lambda self, user_id: list(reviews))
    driver = OpenWebUIDriver(load_target("open-webui"))
    app = RunningApp("http://owui", {}, model_url="http://model/v1")
    account = Account("user-1", "ana@example.com", "pw", "Ana")
    ledger = driver._reviews.setdefault((app.base_url, account.id), Reviews())
    session = _open_webui_session(lambda request: httpx.Response(200, json=[{"id": "m-1", "content": "A."}]))
    session.account, session.reviews = account, ledger
    reviews.append({"memories_after": ["A."]})
    driver.settle(app, session, 1)  # one turn with memory on: its review, and what it chose, are there
    ledger.memory_on = False
    driver.settle(app, session, 3)  # two turns with memory off: no review is waited for
    assert (ledger.turns_seen, ledger.unreviewed, ledger.reviews_seen) == (3, 2, 1)
    ledger.memory_on = True
    reviews.append({"memories_after": ["A."]})
    driver.settle(app, session, 4)  # one more with memory on: one more review
    assert (ledger.turns_seen, ledger.unreviewed, ledger.reviews_seen) == (4, 2, 2)



def test_open_webui_settle_after_a_restart_counts_the_new_model_servers_reviews_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    logs: dict[str, list[dict]] = {"http://model-1/v1": [], "http://model-2/v1": []}
    monkeypatch.setattr(ModelServer, "reviews", lambda self, user_id: list(logs[self.base_url]))
    monkeypatch.setattr("harness.drivers.open_webui.memory_writes.SETTLE_SECONDS", 0.2)
    driver = OpenWebUIDriver(load_target("open-webui"))
    before, after = (RunningApp("http://owui", {}, model_url=url) for url in logs)
    account = Account("user-1", "ana@example.com", "pw", "Ana")
    ledger = driver._reviews.setdefault((before.base_url, account.id), Reviews())
    session = _open_webui_session(lambda request: httpx.Response(200, json=[{"id": "m-1", "content": "A."}]))
    session.account, session.reviews = account, ledger
    logs["http://model-1/v1"].append({"memories_after": ["A."]})
    driver.settle(before, session, 1)
    # Restarted on its data with a model server of its own, whose log holds only the turns sent since.
    logs["http://model-2/v1"].append({"memories_after": ["A."]})
    driver.settle(after, session, 2)
    assert (ledger.turns_seen, ledger.reviewed_before, ledger.reviews_seen) == (2, 1, 1)
    with pytest.raises(Timeout, match="each of Ana <ana@example.com>'s 2 turns"):
        driver.settle(after, session, 3)  # a turn since, whose review never came


CHROMA = ["CREATE TABLE embeddings (id INTEGER PRIMARY KEY, segment_id TEXT, embedding_id TEXT, seq_id BLOB)",
          "CREATE TABLE embeddings_queue (seq_id INTEGER PRIMARY KEY, topic TEXT, id TEXT, operation INTEGER,"
          " vector BLOB, encoding TEXT, metadata TEXT)"]


def test_what_is_left_of_deleted_memories_in_open_webuis_sqlite_and_chroma(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "webui.db") as conn:
        conn.execute(OPEN_WEBUI_MEMORY)
    (tmp_path / "vector_db").mkdir()
    with sqlite3.connect(tmp_path / "vector_db" / "chroma.sqlite3") as conn:
        for statement in CHROMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO embeddings (segment_id, embedding_id) VALUES ('s', ?)", [("kept",)])
        conn.executemany("INSERT INTO embeddings_queue (topic, id, operation, vector) VALUES ('t', ?, ?, ?)",
                         [("gone", 2, b"\0" * 8), ("kept", 2, b"\0" * 8), ("gone", 3, None)])
    app = RunningApp("http://owui", {}, data_dir=tmp_path)
    insert_memories(app, False, [MemoryRow("kept", "user-1", "My gate code is 7731.", 0)])
    driver = OpenWebUIDriver(load_target("open-webui"))
    assert driver.memory_remains(app, ["gone"]) == {
        "memory table rows": 0, "Chroma embeddings records": 0, "Chroma write-ahead log vectors (embeddings_queue)": 1}
    assert driver.memory_remains(app, ["kept"]) == {
        "memory table rows": 1, "Chroma embeddings records": 1, "Chroma write-ahead log vectors (embeddings_queue)": 1}


def test_khoj_offers_what_users_take_back_and_no_search_nor_passwords() -> None:
    driver = load_driver(load_target("khoj"))
    assert TAKING_BACK | {Capability.CHAT_API, Capability.ACCOUNT_REMAINS} <= driver.capabilities
    assert Capability.MEMORY_SEARCH not in driver.capabilities and Capability.DATABASE_ACCESS not in driver.capabilities
    assert not driver.writes_memories_later  # each turn returns once its memories are written
    lack = driver.lacks[Capability.PASSWORD_SIGN_IN]
    assert isinstance(lack, AppLacks) and "no password" in lack.why and not hasattr(driver, "try_sign_in")
    assert {f["name"] for f in driver.fault_catalogue()} == set(load_target("khoj").fault_scenarios)


def test_khoj_reads_its_session_cookie_from_a_browser_or_an_api_session() -> None:
    from harness.drivers.khoj import session_cookie

    assert session_cookie({"cookies": {"session": "abc"}}) == "abc"
    assert session_cookie({"cookies": [{"name": "other", "value": "x"}, {"name": "session", "value": "abc"}]}) == "abc"
    with pytest.raises(DriverError):
        session_cookie({"user_id": "u"})


def test_khoj_is_given_its_database_as_postgres_settings_a_socket_folder_as_its_host() -> None:
    from harness.drivers.khoj import postgres_env

    assert postgres_env("postgresql://postgres:@/memtest_a?host=/tmp/pg") == {
        "POSTGRES_HOST": "/tmp/pg", "POSTGRES_PORT": "", "POSTGRES_USER": "postgres", "POSTGRES_PASSWORD": "",
        "POSTGRES_DB": "memtest_a"}
    assert postgres_env("postgresql://u:p@db:5433/x")["POSTGRES_PORT"] == "5433"


def test_khoj_waits_for_its_own_line_of_each_turn_saved(tmp_path: Path) -> None:
    from harness.app.app_launcher import RunningApp
    from harness.drivers.khoj import KhojDriver

    log = tmp_path / "app.khoj.log"
    log.write_text('Saved Conversation Turn (c1):\nYou (ana@x.test.example.com): "hi"\n\nKhoj: "hello"\n'
                   'Saved Conversation Turn (c2):\nYou (ben@x.test.example.com): "hi"\n', encoding="utf-8")
    app = RunningApp("http://127.0.0.1:1", {}, log_path=tmp_path / "app.log")
    driver = KhojDriver(load_target("khoj"))
    assert driver.saved_turns(app, lambda t: t.user == "ana@x.test.example.com") == 1
    assert driver.saved_turns(app, lambda t: t.conversation == "c2") == 1
    with log.open("ab") as more:  # lines written in parts, a character's bytes split between two reads
        more.write(b"Saved Conversation Turn (c3):\nYou (ana@x.test.example.com): \"caf" + b"\xc3")
        more.flush()
        assert driver.saved_turns(app, lambda t: t.user == "ana@x.test.example.com") == 2
        more.write(b"\xa9\"\n" + b"Saved Conversation Turn (c4):\nYou (ANA@x.test.example.c")
        more.flush()
        assert driver.saved_turns(app, lambda t: t.conversation == "c4") == 0
        more.write(b"om): \"hi\"\n")
    assert driver.saved_turns(app, lambda t: t.user == "ana@x.test.example.com") == 3


def test_every_targets_known_defects_name_scenarios_that_exist_and_their_steps() -> None:
    from harness.app.target import TARGETS
    from harness.suite.known_defects import known_defects

    for path in sorted(TARGETS.glob("*.toml")):
        known_defects(load_target(path))  # raises UnknownScenario, naming the first that does not
