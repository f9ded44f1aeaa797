"""What users take back, through the HTTP API and in the store: deleting, editing and clearing memories, deleting a
conversation, turning memory off; each kept after a restart, a re-embedding and an export."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser

import psycopg
import pytest
from pgvector.psycopg import register_vector

from memchat import cli
from memchat.app_state import AppState
from memchat.embedders import get_embedder
from memchat.tests.helpers import PASSWORD, page_config, settings_for, table_counts

V1 = get_embedder("hash-ngram-v1")
NOW = "2026-03-01T09:00:00+00:00"


def store_rows(dsn: str) -> dict[str, tuple]:
    """Every memory row as the store holds it, its vector as bytes: id -> (owner, conversation, text, key, vector,
    embedder, created, expires)."""
    with psycopg.connect(dsn) as conn:
        register_vector(conn)
        rows = conn.execute("SELECT id, user_id, conversation_id, text, fact_key, embedding, embedder, created_at,"
                            " expires_at FROM memories").fetchall()
    return {r[0]: (*r[1:5], r[5].to_numpy().tobytes() if r[5] is not None else None, *r[6:]) for r in rows}


def tombstones(dsn: str) -> set[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        return {(r[0], r[1]) for r in conn.execute("SELECT user_id, memory_id FROM memory_tombstones")}


def remember(client, texts: list[str], cid: str | None = None) -> list[str]:  # noqa: ANN001
    resp = client.post("/api/memories", json={"items": texts, "conversation_id": cid})
    assert resp.status_code == 201, resp.text
    return resp.json()["stored"]


def ask(client, text: str) -> dict:  # noqa: ANN001
    """Ask in a new conversation, as the page does: the reply and what it recalled."""
    cid = client.post("/api/conversations", json={}).json()["conversation"]["id"]
    return client.post(f"/api/conversations/{cid}/messages", json={"text": text}).json()


def found(client, query: str) -> list[str]:  # noqa: ANN001
    return [r["text"] for r in client.get("/api/memories/search", params={"q": query}).json()["results"]]


def listed(client) -> list[str]:  # noqa: ANN001
    return [m["text"] for m in client.get("/api/memories").json()["memories"]]


@pytest.fixture
def people(make_app):
    """alice with three memories, bob with one, on a settable clock set to NOW."""
    app = make_app(settable_clock=True)
    _, alice = app.user("alice")
    _, bob = app.user("bob")
    alice.post("/api/admin/clock", json={"now": NOW}, headers=app.admin)
    ids = remember(alice, ["My dog's name is Rex.", "My locker number is 42.", "My car is a Fiat Panda."])
    remember(bob, ["My dog's name is Rex."])
    return app, alice, bob, ids


# -- deleting one memory ----------------------------------------------------------------------------------------------


def test_a_deleted_memory_is_gone_and_nothing_else_changes(people) -> None:
    app, alice, bob, (rex, locker, car) = people
    before = store_rows(app.dsn)
    resp = alice.delete(f"/api/memories/{rex}")
    assert resp.status_code == 204 and resp.content == b""
    assert listed(alice) == ["My locker number is 42.", "My car is a Fiat Panda."]
    assert found(alice, "My dog's name is Rex.") == []
    assert ask(alice, "What is my dog's name?")["reply"]["text"] == "I don't remember your dog's name."
    after = store_rows(app.dsn)
    assert rex not in after and after == {i: row for i, row in before.items() if i != rex}  # the row and its vector
    with psycopg.connect(app.dsn) as conn:
        [(owner, deleted_at)] = conn.execute("SELECT user_id, deleted_at FROM memory_tombstones WHERE memory_id = %s",
                                             (rex,)).fetchall()
    assert owner == "alice" and abs((deleted_at - datetime.fromisoformat(NOW)).total_seconds()) < 60
    assert found(bob, "My dog's name is Rex.") == ["My dog's name is Rex."]  # bob's own, same words, untouched
    assert alice.delete(f"/api/memories/{rex}").status_code == 404  # gone: unknown now


def test_another_users_memory_answers_404_like_an_unknown_one_and_changes_nothing(people) -> None:
    app, alice, bob, (rex, *_) = people
    before, counts = store_rows(app.dsn), table_counts(app.dsn)
    for method, kwargs in (("DELETE", {}), ("PUT", {"json": {"text": "My dog's name is Max."}})):
        mine, unknown = (bob.request(method, f"/api/memories/{mid}", **kwargs) for mid in (rex, "m_nobody"))
        assert (mine.status_code, mine.json()) == (unknown.status_code, unknown.json()) == (
            404, {"error": "memory not found"})
    assert store_rows(app.dsn) == before and table_counts(app.dsn) == counts and tombstones(app.dsn) == set()


# -- editing ----------------------------------------------------------------------------------------------------------


def test_an_edited_memory_is_found_by_its_new_text_only(people) -> None:
    app, alice, bob, (rex, locker, car) = people
    cid = alice.post("/api/conversations", json={}).json()["conversation"]["id"]
    [told] = remember(alice, ["My bike lock code is 1234."], cid)
    before = store_rows(app.dsn)
    old = next(m for m in alice.get("/api/memories").json()["memories"] if m["id"] == told)
    resp = alice.put(f"/api/memories/{told}", json={"text": "My favourite colour is teal."})
    assert resp.status_code == 200
    memory = resp.json()["memory"]
    assert memory == {**old, "text": "My favourite colour is teal."}  # same id, conversation, times, embedder
    assert alice.get("/api/memories").json()["memories"][-1] == memory  # listed as it answered, in its place
    assert found(alice, "My favourite colour is teal.") == ["My favourite colour is teal."]
    assert found(alice, "My bike lock code is 1234.") == []
    assert ask(alice, "What is my favourite colour?")["reply"]["text"] == "Your favourite colour is teal."
    assert ask(alice, "What is my bike lock code?")["reply"]["text"] == "I don't remember your bike lock code."
    after = store_rows(app.dsn)
    owner, conversation, text, key, vector, embedder, created, expires = after[told]
    assert (owner, conversation, text, key, embedder) == ("alice", cid, "My favourite colour is teal.",
                                                          "favourite colour", "hash-ngram-v1")
    assert vector == V1.embed("My favourite colour is teal.").tobytes() and (created, expires) == before[told][6:]
    assert {i: r for i, r in after.items() if i != told} == {i: r for i, r in before.items() if i != told}


def test_an_edit_with_a_bad_text_is_refused_and_changes_nothing(people) -> None:
    app, alice, _, (rex, *_) = people
    before = store_rows(app.dsn)
    for kwargs in ({"json": {}}, {"json": {"text": ""}}, {"json": {"text": "   "}}, {"json": {"text": 42}},
                   {"json": {"text": ["My dog's name is Max."]}}, {"json": {"text": "x" * 4001}},
                   {"json": "My dog's name is Max."}, {"content": b'{"text": "half \\ud83d"}'},
                   {"content": b"{not json"}):
        resp = alice.put(f"/api/memories/{rex}", **kwargs)
        assert resp.status_code == 400 and isinstance(resp.json()["error"], str), kwargs
    assert store_rows(app.dsn) == before
    assert alice.put(f"/api/memories/{rex}", json={"text": "x" * 4000}).status_code == 200  # the limit itself


def test_an_expired_memory_cannot_be_edited_but_can_be_deleted(people) -> None:
    app, alice, _, (rex, locker, _car) = people
    alice.post("/api/admin/clock", json={"advance_days": 366}, headers=app.admin)
    alice.post("/api/login", json={"email": "alice@example.test", "password": PASSWORD})  # the session ended too
    assert listed(alice) == []  # forgotten
    assert alice.put(f"/api/memories/{rex}", json={"text": "My dog's name is Max."}).status_code == 404
    assert alice.delete(f"/api/memories/{locker}").status_code == 204
    assert locker not in store_rows(app.dsn) and ("alice", locker) in tombstones(app.dsn)


# -- clearing all -----------------------------------------------------------------------------------------------------


def test_clearing_all_memories_empties_that_user_only(people) -> None:
    app, alice, bob, ids = people
    bobs = {i: r for i, r in store_rows(app.dsn).items() if r[0] == "bob"}
    resp = alice.delete("/api/memories")
    assert resp.status_code == 200 and resp.json() == {"deleted": 3}
    assert listed(alice) == [] and found(alice, "My dog's name is Rex.") == []
    assert store_rows(app.dsn) == bobs
    assert tombstones(app.dsn) == {("alice", i) for i in ids}
    assert listed(bob) == ["My dog's name is Rex."]
    assert alice.delete("/api/memories").json() == {"deleted": 0}


# -- deleting a conversation ------------------------------------------------------------------------------------------


def test_a_deleted_conversation_is_gone_for_good_and_its_memories_are_kept(people) -> None:
    app, alice, bob, _ = people
    cid = alice.post("/api/conversations", json={"title": "pets"}).json()["conversation"]["id"]
    turn = alice.post(f"/api/conversations/{cid}/messages", json={"text": "My cat's name is Tom."}).json()
    [told] = remember(alice, turn["remember"], cid)
    other = alice.post("/api/conversations", json={}).json()["conversation"]["id"]
    memories_before = store_rows(app.dsn)
    assert bob.delete(f"/api/conversations/{cid}").status_code == 404  # not bob's: as unknown, nothing changes
    assert store_rows(app.dsn) == memories_before and len(alice.get(f"/api/conversations/{cid}/messages").json()[
        "messages"]) == 2
    resp = alice.delete(f"/api/conversations/{cid}")
    assert resp.status_code == 204 and resp.content == b""
    assert [c["id"] for c in alice.get("/api/conversations").json()["conversations"]] == [other]
    unknown = alice.get("/c/c_unknown")
    page = alice.get(f"/c/{cid}")
    assert (page.status_code, page.text) == (unknown.status_code, unknown.text) and page.status_code == 404
    for method, path, kwargs in (("GET", f"/api/conversations/{cid}/messages", {}),
                                 ("POST", f"/api/conversations/{cid}/messages", {"json": {"text": "hello"}}),
                                 ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["x y"]}}),
                                 ("DELETE", f"/api/conversations/{cid}", {})):
        resp = alice.request(method, path, **kwargs)
        assert (resp.status_code, resp.json()) == (404, {"error": "conversation not found"}), (method, path)
    with psycopg.connect(app.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM messages WHERE conversation_id = %s", (cid,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM conversations WHERE id = %s", (cid,)).fetchone()[0] == 0
    # the memory told in it outlives it, unchanged (it still names the conversation it was told in)
    assert store_rows(app.dsn) == memories_before and memories_before[told][1] == cid
    assert ask(alice, "What is my cat's name?")["reply"]["text"] == "Your cat's name is Tom."


# -- memory off -------------------------------------------------------------------------------------------------------


def test_memory_off_remembers_nothing_and_recalls_nothing_for_that_user_only(people) -> None:
    app, alice, bob, ids = people
    assert alice.get("/api/settings").json() == {"settings": {"memory": True}}  # on by default
    resp = alice.put("/api/settings", json={"memory": False})
    assert resp.status_code == 200 and resp.json() == {"settings": {"memory": False}}
    assert alice.get("/api/settings").json() == {"settings": {"memory": False}}
    assert bob.get("/api/settings").json() == {"settings": {"memory": True}}
    before = store_rows(app.dsn)
    cid = alice.post("/api/conversations", json={}).json()["conversation"]["id"]
    turn = alice.post(f"/api/conversations/{cid}/messages", json={"text": "My shoe size is 38."}).json()
    assert turn["remember"] == []  # the page is told to remember nothing
    refused = alice.post("/api/memories", json={"conversation_id": cid, "items": ["My shoe size is 38."]})
    assert refused.status_code == 409 and "memory is off" in refused.json()["error"]
    asked = ask(alice, "What is my dog's name?")
    assert asked["recalled"] == [] and asked["reply"]["text"] == "I don't remember your dog's name."
    # the conversation's own turns are no memory: it still answers them
    same = alice.post(f"/api/conversations/{cid}/messages", json={"text": "What is my shoe size?"}).json()
    assert same["reply"]["text"] == "Your shoe size is 38." and same["recalled"] == []
    assert store_rows(app.dsn) == before  # nothing written, and what was remembered is kept
    assert listed(alice) == ["My dog's name is Rex.", "My locker number is 42.", "My car is a Fiat Panda."]
    # bob is not affected
    assert ask(bob, "What is my dog's name?")["reply"]["text"] == "Your dog's name is Rex."
    assert ask(bob, "My bike is red.")["remember"] == ["My bike is red."]
    # on again: what was remembered before is used again; what was told while off does not exist
    assert alice.put("/api/settings", json={"memory": True}).json() == {"settings": {"memory": True}}
    assert ask(alice, "What is my dog's name?")["reply"]["text"] == "Your dog's name is Rex."
    assert ask(alice, "What is my shoe size?")["reply"]["text"] == "I don't remember your shoe size."
    assert ask(alice, "My hat is green.")["remember"] == ["My hat is green."]


def test_a_setting_other_than_a_boolean_is_refused_and_changes_nothing(people) -> None:
    _, alice, _, _ = people
    for kwargs in ({"json": {"memory": "false"}}, {"json": {"memory": 0}}, {"json": {"memory": None}},
                   {"json": {}}, {"json": {"memory": False, "theme": "dark"}}, {"json": [False]},
                   {"content": b"{not json"}):
        resp = alice.put("/api/settings", **kwargs)
        assert resp.status_code == 400 and isinstance(resp.json()["error"], str), kwargs
    assert alice.get("/api/settings").json() == {"settings": {"memory": True}}


def test_the_new_routes_need_a_session(people) -> None:
    app, _, _, (rex, *_) = people
    client = app.client()
    before = store_rows(app.dsn)
    for method, path, kwargs in (("PUT", f"/api/memories/{rex}", {"json": {"text": "x y"}}),
                                 ("DELETE", f"/api/memories/{rex}", {}), ("DELETE", "/api/memories", {}),
                                 ("DELETE", "/api/conversations/c_x", {}), ("GET", "/api/settings", {}),
                                 ("PUT", "/api/settings", {"json": {"memory": False}})):
        resp = client.request(method, path, **kwargs)
        assert (resp.status_code, resp.json()) == (401, {"error": "log in first"}), (method, path)
    assert store_rows(app.dsn) == before
    resp = client.get("/memories", follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"] == "/login"


def test_deleting_an_account_still_deletes_everything_it_owned(people) -> None:
    app, alice, _, (rex, *_) = people
    alice.delete(f"/api/memories/{rex}")
    alice.put("/api/settings", json={"memory": False})
    assert app.client().delete("/api/admin/users/alice", headers=app.admin).json() == {"deleted": True}
    assert {r[0] for r in store_rows(app.dsn).values()} == {"bob"} and tombstones(app.dsn) == set()


# -- after a restart, a re-embedding and an export ------------------------------------------------------------------


def test_nothing_taken_back_returns_after_a_restart_a_reembedding_or_an_export(people, make_app, tmp_path) -> None:
    app, alice, bob, (rex, locker, car) = people
    cid = alice.post("/api/conversations", json={}).json()["conversation"]["id"]
    alice.delete(f"/api/memories/{rex}")
    alice.put(f"/api/memories/{locker}", json={"text": "My favourite colour is teal."})
    alice.delete(f"/api/conversations/{cid}")
    alice.put("/api/settings", json={"memory": False})
    restarted = make_app(settable_clock=True, embedder="hash-ngram-v2")  # a new app on the same data
    restarted.state.memories.reembed()
    client = restarted.client()
    client.cookies = alice.cookies
    assert listed(client) == ["My favourite colour is teal.", "My car is a Fiat Panda."]
    assert client.get("/api/settings").json() == {"settings": {"memory": False}}
    assert client.get(f"/c/{cid}").status_code == 404
    client.put("/api/settings", json={"memory": True})
    assert ask(client, "What is my dog's name?")["reply"]["text"] == "I don't remember your dog's name."
    assert ask(client, "What is my favourite colour?")["reply"]["text"] == "Your favourite colour is teal."
    assert found(client, "My locker number is 42.") == []
    v2 = get_embedder("hash-ngram-v2")
    assert store_rows(app.dsn)[locker][4] == v2.embed("My favourite colour is teal.").tobytes()
    assert rex not in store_rows(app.dsn)
    out = tmp_path / "export.jsonl"
    assert cli.main(["export", "--from", app.dsn, "--out", str(out)]) == 0
    exported = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rex not in exported and exported[locker]["text"] == "My favourite colour is teal."
    assert set(exported) == set(store_rows(app.dsn))


def test_the_schema_upgrades_a_database_made_before_it(pg_server, redis_url, password_hash) -> None:
    """A database of the app as it was before: the tables of what users take back are added at start."""
    dsn = pg_server.create_database()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE memory_tombstones")
        conn.execute("ALTER TABLE users DROP COLUMN memory_enabled")
        conn.execute("ALTER TABLE conversations DROP COLUMN deleted_at")
        conn.execute("INSERT INTO users (id, email, password_hash) VALUES ('old', 'old@example.test', %s)",
                     (password_hash,))
    state = AppState(settings_for(dsn, redis_url))
    try:
        assert state.accounts.memory_enabled("old") is True
        now = datetime.now(UTC)
        [mid] = state.memories.write("old", None, ["My dog's name is Rex."], now)
        assert state.memories.delete("old", mid, now) and tombstones(dsn) == {("old", mid)}
    finally:
        state.close()
    AppState(settings_for(dsn, redis_url)).close()  # and a second start changes nothing


# -- the pages --------------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Element:
    tag: str
    attrs: dict[str, str | None]
    parent: Element | None
    text: str = ""


class Elements(HTMLParser):
    """Every element of a page with its attributes and its text (the text of all it holds), in document order."""

    VOID = {"input", "meta", "link", "br", "img"}

    def __init__(self, html: str) -> None:
        super().__init__()
        self.all: list[Element] = []
        self._open: list[Element] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs), self._open[-1] if self._open else None)
        self.all.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element.text += data

    def by_testid(self, testid: str) -> list[Element]:
        return [e for e in self.all if e.attrs.get("data-testid") == testid]

    def one(self, testid: str) -> Element:
        [element] = self.by_testid(testid)
        return element


def test_the_memories_page_shows_the_users_memories_oldest_first_as_text(people) -> None:
    app, alice, bob, ids = people
    [odd] = remember(alice, ['My motto is <b>"bold" & \'brave\'</b>.'])
    remember(bob, ["My secret is bob's own."])
    page = alice.get("/memories")
    assert page.status_code == 200 and "<b>" not in page.text
    html = Elements(page.text)
    assert [e.text for e in html.all if e.tag == "h1"] == ["Memories"]
    assert html.one("memory-list").attrs["aria-label"] == "Memories" and html.one("memory-list").tag == "ul"
    items = html.by_testid("memory-item")
    api = alice.get("/api/memories").json()["memories"]
    assert [(i.tag, i.attrs["data-memory-id"]) for i in items] == [("li", m["id"]) for m in api]
    assert api[-1]["id"] == odd
    assert [e.text for e in html.by_testid("memory-text")] == [m["text"] for m in api]  # bob's is not among them
    for testid, name, text in (("edit-memory", "Edit memory", "Edit"), ("delete-memory", "Delete memory", "Delete")):
        buttons = html.by_testid(testid)
        assert len(buttons) == len(api) and all(
            (b.tag, b.attrs["aria-label"], b.text) == ("button", name, text) for b in buttons)
    switch = html.one("memory-enabled")
    assert (switch.tag, switch.attrs["type"], switch.attrs["role"], switch.attrs["id"]) == (
        "input", "checkbox", "switch", "memory-enabled") and "checked" in switch.attrs
    assert [e.text for e in html.all if e.tag == "label" and e.attrs.get("for") == "memory-enabled"] == [
        "Remember what I tell you"]
    assert (html.one("clear-memories").text, html.one("confirm-clear-memories").text) == (
        "Clear all memories", "Yes, clear all")
    assert "hidden" in html.one("confirm-clear-memories").attrs and "hidden" not in html.one("clear-memories").attrs
    back = html.one("back-to-chat")
    assert (back.tag, back.attrs["href"], back.text) == ("a", "/", "Back to chat")
    assert html.by_testid("no-memories") == [] and html.by_testid("memories-error") == []
    assert html.one("memory-status").text.startswith("Memory is on")
    assert page_config(page.text) == {"deleteOptimistically": False, "saveMemorySetting": True}
    assert [e.attrs["src"] for e in html.all if e.tag == "script" and "src" in e.attrs] == [
        "/static/common.js", "/static/memories.js"]


def test_the_memories_page_shows_what_the_server_holds_after_each_change(people) -> None:
    _, alice, _, (rex, locker, car) = people
    alice.delete(f"/api/memories/{rex}")
    alice.put(f"/api/memories/{locker}", json={"text": "My locker number is 43."})
    alice.put("/api/settings", json={"memory": False})
    html = Elements(alice.get("/memories").text)
    assert [(e.attrs["data-memory-id"], e.text) for e in html.by_testid("memory-item")] == [
        (locker, "My locker number is 43.EditDelete"), (car, "My car is a Fiat Panda.EditDelete")]
    assert "checked" not in html.one("memory-enabled").attrs
    assert html.one("memory-status").text.startswith("Memory is off")
    assert html.one("memory-status").attrs["data-on"].startswith("Memory is on")  # the script's other text
    alice.delete("/api/memories")
    html = Elements(alice.get("/memories").text)
    assert html.by_testid("memory-item") == [] and html.one("no-memories").text == "You have no memories."


def test_the_chat_page_links_to_the_memories_and_offers_to_delete_each_conversation(people) -> None:
    _, alice, _, _ = people
    cids = [alice.post("/api/conversations", json={"title": t}).json()["conversation"]["id"] for t in ("a", "b")]
    html = Elements(alice.get(f"/c/{cids[0]}").text)
    link = html.one("memories-link")
    assert (link.tag, link.attrs["href"], link.text) == ("a", "/memories", "Memories")
    items = [a.parent for a in html.by_testid("conversation-item")]
    deletes = html.by_testid("delete-conversation")
    assert len(items) == 2 and [b.parent for b in deletes] == items and all(li.tag == "li" for li in items)
    assert all((b.tag, b.attrs["type"], b.attrs["aria-label"], b.text) == ("button", "button", "Delete conversation",
                                                                         "Delete") for b in deletes)
    assert html.by_testid("memory-off") == []
    alice.put("/api/settings", json={"memory": False})
    assert Elements(alice.get("/").text).one("memory-off").text == "Memory is off"


def test_the_page_scripts_send_every_change_to_the_api(people) -> None:
    """The pages' scripts are served and speak to these routes; what they do in a browser, the suite's scenarios
    prove."""
    _, alice, _, _ = people
    scripts = {name: alice.get(f"/static/{name}") for name in ("common.js", "chat.js", "memories.js")}
    assert all(r.status_code == 200 and "javascript" in r.headers["content-type"] for r in scripts.values())
    memories, chat = scripts["memories.js"].text, scripts["chat.js"].text
    for needle in ('request("PUT", memoryPath(item)', 'request("DELETE", memoryPath(item))',
                   'request("DELETE", "/api/memories")', 'request("PUT", "/api/settings"', '"memory-edit-input"',
                   '"save-memory"', '"memories-error"', '"no-memories"', 'setAttribute("aria-label", "Memory")'):
        assert needle in memories, needle
    for needle in ('request("DELETE", "/api/conversations/"', '"delete-conversation"', '"memories-link"',
                   'location.href = "/"'):
        assert needle in chat, needle
