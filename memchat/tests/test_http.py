"""The HTTP API and pages, driven in-process: sessions and cookies, ownership, bad input, admin, the chat page."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memchat.tests.helpers import ADMIN_TOKEN, COOKIE, PASSWORD, page_config, session_cookie, table_counts

# -- sessions ---------------------------------------------------------------------------------------------------------


def test_health_names_the_servers_and_faults(make_app) -> None:
    body = make_app(faults={"write-race"}).client().get("/healthz").json()
    assert body["app"] == "memchat" and body["faults"] == ["write-race"] and body["embedder"] == "hash-ngram-v1"
    assert body["postgres"].startswith("16.") and body["pgvector"] == "0.6.2" and body["redis"].startswith("6.")


def test_login_sets_a_persistent_http_only_lax_cookie(make_app) -> None:
    app = make_app()
    email, _ = app.user("u1")
    client = app.client()
    resp = client.post("/api/login", json={"email": email.upper(), "password": PASSWORD})
    assert resp.status_code == 200 and resp.json() == {"user": {"id": "u1", "email": email}}
    cookie = session_cookie(resp)
    assert "httponly" in cookie and cookie["samesite"].lower() == "lax" and cookie["path"] == "/"
    assert int(cookie["max-age"]) == 30 * 24 * 3600
    assert client.get("/api/me").json() == {"user": {"id": "u1", "email": email}}


def test_the_form_login_sets_the_same_cookie(make_app) -> None:
    app = make_app()
    email, _ = app.user("u1")
    resp = app.client().post("/login", data={"email": email, "password": PASSWORD}, follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"] == "/"
    cookie = session_cookie(resp)
    assert "httponly" in cookie and cookie["samesite"].lower() == "lax" and "max-age" in cookie


def test_wrong_credentials_answer_401_and_set_no_cookie(make_app) -> None:
    app = make_app()
    email, _ = app.user("u1")
    for body in ({"email": email, "password": "wrong password"}, {"email": "nobody@example.test", "password": "x"}):
        resp = app.client().post("/api/login", json=body)
        assert resp.status_code == 401 and "error" in resp.json()
        assert not resp.headers.get_list("set-cookie")
    page = app.client().post("/login", data={"email": email, "password": "nope"})
    assert page.status_code == 401 and 'data-testid="login-error"' in page.text


def test_logout_ends_the_session(make_app) -> None:
    app = make_app()
    _, client = app.user("u1")
    token = client.cookies[COOKIE]
    resp = client.post("/api/logout")
    assert resp.status_code == 200 and session_cookie(resp).get("max-age") == "0"
    assert client.get("/api/me").status_code == 401
    other = app.client()
    other.cookies.set(COOKIE, token)  # the old token is dead on the server too, not only in this browser
    assert other.get("/api/me").status_code == 401


def test_pages_need_a_session(make_app) -> None:
    client = make_app().client()
    for path in ("/", "/c/c_whatever"):
        resp = client.get(path, follow_redirects=False)
        assert resp.status_code == 303 and resp.headers["location"] == "/login"
    for path in ("/api/me", "/api/conversations", "/api/memories", "/api/memories/search?q=x"):
        resp = client.get(path)
        assert resp.status_code == 401 and resp.json() == {"error": "log in first"}


# -- ownership (IDOR) -------------------------------------------------------------------------------------------------


@pytest.fixture
def two_users(make_app):
    app = make_app()
    _, alice = app.user("alice")
    _, bob = app.user("bob")
    cid = alice.post("/api/conversations", json={"title": "alice's"}).json()["conversation"]["id"]
    alice.post(f"/api/conversations/{cid}/messages", json={"text": "My wifi password is hunter2."})
    return app, alice, bob, cid


def test_another_users_conversation_answers_404(two_users) -> None:
    app, alice, bob, cid = two_users
    assert len(alice.get(f"/api/conversations/{cid}/messages").json()["messages"]) == 2
    before = table_counts(app.dsn)
    resp = bob.get(f"/api/conversations/{cid}/messages")
    assert resp.status_code == 404 and resp.json() == {"error": "conversation not found"}
    assert bob.get(f"/c/{cid}").status_code == 404
    assert "hunter2" not in bob.get(f"/c/{cid}").text
    assert bob.post(f"/api/conversations/{cid}/messages", json={"text": "hi"}).status_code == 404
    assert bob.post("/api/memories", json={"conversation_id": cid, "items": ["x y z"]}).status_code == 404
    assert bob.get("/api/conversations").json() == {"conversations": []}
    assert bob.get("/api/conversations/c_does_not_exist/messages").status_code == 404
    assert table_counts(app.dsn) == before


def test_conversations_list_newest_first_and_messages_in_order(make_app) -> None:
    app = make_app(settable_clock=True)
    _, client = app.user("u1")
    first = client.post("/api/conversations", json={"title": "first"}).json()["conversation"]
    client.post("/api/admin/clock", json={"advance_days": 1}, headers=app.admin)
    second = client.post("/api/conversations", json={}).json()["conversation"]
    assert [c["id"] for c in client.get("/api/conversations").json()["conversations"]] == [second["id"], first["id"]]
    client.post("/api/admin/clock", json={"advance_days": 1}, headers=app.admin)
    client.post(f"/api/conversations/{first['id']}/messages", json={"text": "My shoe size is 42."})
    listed = client.get("/api/conversations").json()["conversations"]
    assert [c["id"] for c in listed] == [first["id"], second["id"]]  # a new message moves it to the top
    messages = client.get(f"/api/conversations/{first['id']}/messages").json()["messages"]
    assert [(m["role"], m["text"]) for m in messages] == [
        ("user", "My shoe size is 42."), ("assistant", "Got it. I'll remember that your shoe size is 42.")]
    assert listed[1]["title"] == ""  # untitled until its first message
    client.post(f"/api/conversations/{second['id']}/messages", json={"text": "hello there"})
    assert client.get("/api/conversations").json()["conversations"][0]["title"] == "hello there"


# -- bad input --------------------------------------------------------------------------------------------------------

BIG = "x" * (64 * 1024 + 1)


def bad_requests(cid: str) -> list[tuple[str, str, dict, int]]:
    """(method, path, request kwargs, expected status); each must change nothing."""
    long_text = "word " * 801
    return [
        ("POST", "/api/login", {"content": b"{not json"}, 400),
        ("POST", "/api/login", {"content": b"\xff\xfe"}, 400),
        ("POST", "/api/login", {"json": ["email", "password"]}, 400),
        ("POST", "/api/login", {"json": "just a string"}, 400),
        ("POST", "/api/login", {"json": {"email": "u1@example.test"}}, 400),
        ("POST", "/api/login", {"json": {"email": 5, "password": PASSWORD}}, 400),
        ("POST", "/api/conversations", {"content": b"[1, 2"}, 400),
        ("POST", "/api/conversations", {"json": {"title": 123}}, 400),
        ("POST", "/api/conversations", {"json": {"title": "t" * 201}}, 400),
        ("POST", "/api/conversations", {"content": b'{"title": "half an emoji \\ud83d"}'}, 400),
        ("POST", f"/api/conversations/{cid}/messages", {"content": b'{"text": "\\ud83d"}'}, 400),
        ("POST", f"/api/conversations/{cid}/messages", {"json": {}}, 400),
        ("POST", f"/api/conversations/{cid}/messages", {"json": {"text": "   "}}, 400),
        ("POST", f"/api/conversations/{cid}/messages", {"json": {"text": ["My shoe size is 42."]}}, 400),
        ("POST", f"/api/conversations/{cid}/messages", {"json": {"text": long_text}}, 400),
        ("POST", f"/api/conversations/{cid}/messages", {"content": b"text=hello"}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": []}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": "My shoe size is 42."}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["ok fact", 42]}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["ok fact", ""]}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["fact"] * 51}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": 7, "items": ["My shoe size is 42."]}}, 404),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["ok fact"], "turn": "1"}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["ok fact"], "turn": 1, "first": -1}},
         400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["ok fact"], "turn": 1, "first": 4000}},
         400),
        ("POST", "/api/memories", {"json": {"items": ["ok fact"], "turn": 1}}, 400),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": ["ok fact"], "turn": 10 ** 9}}, 404),
        ("POST", "/api/memories", {"json": {"conversation_id": cid, "items": [BIG[:5000]]}}, 400),
        ("POST", "/api/memories", {"content": json.dumps({"conversation_id": cid, "items": [BIG]}).encode(),
                                   "headers": {"content-type": "application/json"}}, 413),
        ("POST", "/api/memories", {"content": (c for c in [b'{"items": ["', BIG.encode(), b'"]}'])}, 413),
        ("POST", "/api/login", {"content": BIG.encode()}, 413),
        ("GET", "/api/memories/search", {}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "   "}}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "x" * 4001}}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "shoe size", "k": "0"}}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "shoe size", "k": "101"}}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "shoe size", "k": "-1"}}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "shoe size", "k": "five"}}, 400),
        ("GET", "/api/memories/search", {"params": {"q": "shoe size", "k": "2.5"}}, 400),
    ]


def test_bad_input_answers_4xx_json_and_changes_nothing(make_app) -> None:
    app = make_app()
    _, client = app.user("u1")
    cid = client.post("/api/conversations", json={"title": "t"}).json()["conversation"]["id"]
    client.post("/api/memories", json={"conversation_id": cid, "items": ["My shoe size is 42."]})
    before = table_counts(app.dsn)
    failures = []
    for method, path, kwargs, status in bad_requests(cid):
        resp = client.request(method, path, **kwargs)
        body = resp.json() if resp.headers.get("content-type", "").startswith("application/json") else None
        if resp.status_code != status or not (isinstance(body, dict) and isinstance(body.get("error"), str)):
            failures.append(f"{method} {path} {str(kwargs)[:80]}: {resp.status_code} {resp.text[:100]}")
        if table_counts(app.dsn) != before:
            failures.append(f"{method} {path} {str(kwargs)[:80]} changed the database")
            before = table_counts(app.dsn)
    assert not failures, "\n".join(failures)
    assert client.get("/api/me").status_code == 200  # still logged in, nothing else happened


def test_admin_needs_the_right_token(make_app) -> None:
    app = make_app(settable_clock=True)
    client = app.client()
    before = table_counts(app.dsn)
    body = {"email": "new@example.test", "password": PASSWORD}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": ADMIN_TOKEN},
                    {"Authorization": f"Bearer {ADMIN_TOKEN} "}, {"Authorization": f"bearer{ADMIN_TOKEN}"}):
        for method, path, kwargs in (("POST", "/api/admin/users", {"json": body}),
                                     ("DELETE", "/api/admin/users/u1", {}),
                                     ("POST", "/api/admin/clock", {"json": {"advance_days": 400}})):
            resp = client.request(method, path, headers=headers, **kwargs)
            assert resp.status_code == 401 and resp.json() == {"error": "admin token required"}, (headers, path)
    assert table_counts(app.dsn) == before
    assert abs((app.state.clock.now() - datetime.now(UTC)).total_seconds()) < 60  # the clock did not move


def test_admin_is_off_without_a_configured_token(make_app) -> None:
    app = make_app(admin_token=None)
    for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer None"}):
        resp = app.client().post("/api/admin/users", json={"email": "a@b.c", "password": PASSWORD}, headers=headers)
        assert resp.status_code == 404 and resp.json() == {"error": "not found"}


def test_admin_creates_and_deletes_users_with_everything_they_own(make_app) -> None:
    app = make_app()
    admin = app.client()
    resp = admin.post("/api/admin/users", json={"email": "carol@example.test", "password": PASSWORD, "id": "carol"},
                      headers=app.admin)
    assert resp.status_code == 201 and resp.json() == {"user": {"id": "carol", "email": "carol@example.test"}}
    before = table_counts(app.dsn)
    for body, status in (({"email": "CAROL@example.test", "password": PASSWORD}, 409),
                         ({"email": "dave@example.test", "password": PASSWORD, "id": "carol"}, 409),
                         ({"email": "not-an-email", "password": PASSWORD}, 400),
                         ({"email": "eve@example.test", "password": "short"}, 400),
                         ({"email": "eve@example.test", "password": PASSWORD, "id": "has space"}, 400),
                         ({"email": "eve@example.test", "password": PASSWORD, "id": 12}, 400),
                         ({"email": "eve@example.test"}, 400)):
        resp = admin.post("/api/admin/users", json=body, headers=app.admin)
        assert resp.status_code == status and "error" in resp.json(), body
    assert table_counts(app.dsn) == before
    client = app.client()
    client.post("/api/login", json={"email": "carol@example.test", "password": PASSWORD})
    cid = client.post("/api/conversations", json={}).json()["conversation"]["id"]
    client.post(f"/api/conversations/{cid}/messages", json={"text": "My car is a Fiat Panda."})
    client.post("/api/memories", json={"conversation_id": cid, "items": ["My car is a Fiat Panda."]})
    assert admin.delete("/api/admin/users/carol", headers=app.admin).json() == {"deleted": True}
    assert table_counts(app.dsn) == {"users": 0, "sessions": 0, "conversations": 0, "messages": 0, "memories": 0,
                                     "memory_tombstones": 0}
    assert client.get("/api/me").status_code == 401
    assert admin.delete("/api/admin/users/carol", headers=app.admin).status_code == 404


def test_admin_imports_users_all_or_nothing(make_app) -> None:
    app = make_app()
    admin = app.client()
    app.user("taken")  # id "taken", email taken@example.test
    users = [{"id": f"imp-{i}", "email": f"imp{i}@example.test"} for i in range(3000)]
    users[1] = {**users[1], "password": PASSWORD}
    before = table_counts(app.dsn)
    refused = [  # (body, status, what the one-line error names)
        ({"users": users[:5] + [{"email": "x@example.test"}]}, 400, "users[5]: 'id'"),
        ({"users": users[:5] + [{"id": "x"}]}, 400, "users[5]: 'email'"),
        ({"users": users[:5] + [{"id": "x", "email": "x@example.test", "password": 12345678}]}, 400,
         "users[5]: 'password'"),
        ({"users": users[:5] + [{"id": "imp-2", "email": "x@example.test"}]}, 400, "users[5]: id 'imp-2'"),
        ({"users": users[:5] + [{"id": "x", "email": "IMP3@example.test"}]}, 400, "users[5]: email 'IMP3@"),
        ({"users": users[:5] + [{"id": "has space", "email": "x@example.test"}]}, 400, "users[5]: id may hold"),
        ({"users": []}, 400, "'users'"),
        ({"users": users[:5] + [{"id": "x", "email": "TAKEN@example.test"}, {"id": "taken", "email": "y@e.test"}]},
         409, "email 'TAKEN@example.test'"),
        ({"users": users[:5] + [{"id": "taken", "email": "y@example.test"}]}, 409, "id 'taken'"),
    ]
    for body, status, named in refused:
        resp = admin.post("/api/admin/users/import", json=body, headers=app.admin)
        assert resp.status_code == status and named in resp.json()["error"], (named, resp.text)
        assert "\n" not in resp.json()["error"]
    assert table_counts(app.dsn) == before
    assert admin.post("/api/admin/users/import", json={"users": users}).status_code == 401
    resp = admin.post("/api/admin/users/import", json={"users": users}, headers=app.admin)
    assert resp.status_code == 201 and resp.json() == {"created": 3000}
    assert table_counts(app.dsn)["users"] == before["users"] + 3000
    client = app.client()
    assert client.post("/api/login", json={"email": "imp1@example.test", "password": PASSWORD}).status_code == 200
    for password in (PASSWORD, "!", ""):  # a user imported without a password cannot sign in, with anything
        resp = client.post("/api/login", json={"email": "imp0@example.test", "password": password})
        assert resp.status_code in (400, 401), password
    assert client.post("/login", data={"email": "imp0@example.test", "password": "!"}).status_code == 401


def test_the_clock_moves_only_when_settable(make_app) -> None:
    wall = make_app()
    resp = wall.client().post("/api/admin/clock", json={"advance_days": 1}, headers=wall.admin)
    assert resp.status_code == 409 and "error" in resp.json()
    app = make_app(settable_clock=True)
    client = app.client()
    assert client.post("/api/admin/clock", json={"now": "2030-01-02T03:04:05+00:00"},
                       headers=app.admin).json()["now"].startswith("2030-01-02T03:04")
    assert client.post("/api/admin/clock", json={"advance_days": 2},
                       headers=app.admin).json()["now"].startswith("2030-01-04T03:04")
    for body in ({"now": "next tuesday"}, {"advance_days": "2"}, {}, {"advance_days": None}):
        resp = client.post("/api/admin/clock", json=body, headers=app.admin)
        assert resp.status_code == 400 and "error" in resp.json(), body
    assert app.state.clock.now().isoformat().startswith("2030-01-04T03:04")


# -- memories through the API ---------------------------------------------------------------------------------------


def test_memories_are_listed_oldest_first_with_their_expiry(make_app) -> None:
    app = make_app(settable_clock=True, ttl_days=10)
    _, client = app.user("u1")
    client.post("/api/admin/clock", json={"now": "2026-03-01T00:00:00+00:00"}, headers=app.admin)
    a = client.post("/api/memories", json={"items": ["My shoe size is 42.", "My blood type is O negative."]}).json()
    client.post("/api/admin/clock", json={"advance_days": 1}, headers=app.admin)
    b = client.post("/api/memories", json={"items": ["My landlord is Mr Tanaka."]}).json()
    listed = client.get("/api/memories").json()["memories"]
    assert [m["id"] for m in listed] == a["stored"] + b["stored"]
    assert listed[0]["expires_at"].startswith("2026-03-11T00:00") and listed[0]["embedder"] == "hash-ngram-v1"


def test_a_write_naming_its_turn_is_dated_by_that_turn_whenever_it_arrives(make_app) -> None:
    """The page's last write of a long message may leave as a beacon and overtake the one before it: the memories
    keep the order the user told them in, and another user's turn, or an answer of the assistant, dates nothing."""
    app = make_app(settable_clock=True)
    _, client = app.user("u1")
    _, other = app.user("u2")
    cid = client.post("/api/conversations", json={}).json()["conversation"]["id"]
    first = client.post(f"/api/conversations/{cid}/messages", json={"text": "My shoe size is 42."}).json()
    client.post("/api/admin/clock", json={"advance_days": 1}, headers=app.admin)
    late = client.post("/api/memories", json={"conversation_id": cid, "items": ["My tail fact is C."],
                                              "turn": first["message"]["id"], "first": 2}).json()
    early = client.post("/api/memories", json={"conversation_id": cid, "items": ["My head fact is A.",
                                                                                "My middle fact is B."],
                                               "turn": first["message"]["id"]}).json()
    listed = client.get("/api/memories").json()["memories"]
    assert [m["id"] for m in listed] == early["stored"] + late["stored"]
    assert listed[0]["created_at"] == first["message"]["created_at"]
    other_cid = other.post("/api/conversations", json={}).json()["conversation"]["id"]
    for turn in (first["reply"]["id"], first["message"]["id"]):
        resp = other.post("/api/memories", json={"conversation_id": other_cid, "items": ["x y z"], "turn": turn})
        assert resp.status_code == 404, turn
    resp = client.post("/api/memories", json={"conversation_id": cid, "items": ["x y z"],
                                              "turn": first["reply"]["id"]})
    assert resp.status_code == 404


def test_a_beacon_write_as_text_plain_is_accepted(make_app) -> None:
    app = make_app()
    _, client = app.user("u1")
    body = json.dumps({"conversation_id": None, "items": ["My coffee order is cortado."]})
    resp = client.post("/api/memories", content=body, headers={"content-type": "text/plain;charset=UTF-8"})
    assert resp.status_code == 201 and len(resp.json()["stored"]) == 1


# -- the chat page's front-end configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(("faults", "flush_on", "queue"), [
    (set(), "pagehide", "append"),
    ({"unload-write-lost"}, "beforeunload", "append"),
    ({"write-race"}, "pagehide", "latest-only"),
    ({"unload-write-lost", "write-race"}, "beforeunload", "latest-only"),
], ids=["clean", "unload-write-lost", "write-race", "both"])
def test_the_chat_page_carries_the_front_end_configuration(make_app, faults, flush_on, queue) -> None:
    app = make_app(faults=faults)
    _, client = app.user("u1")
    cid = client.post("/api/conversations", json={"title": "<b>bold</b>"}).json()["conversation"]["id"]
    home = client.get("/")
    assert home.status_code == 200
    assert page_config(home.text) == {"conversationId": None, "holdWrites": bool(faults),
                                      "flushOn": flush_on,
                                      "writeQueue": queue, "flushBeforeLogout": True,
                                      "titleByCharacters": True, "writeBatch": 50,
                                      "enterSendsWhileComposing": False, "pauseWritesAfterError": False,
                                      "resendFailedSends": False, "keepInputUntilAnswered": False,
                                      "newConversationAtOnce": False, "keepOfflineSends": False,
                                      "previewLength": 100, "updatePreview": True}
    page = client.get(f"/c/{cid}")
    assert page_config(page.text)["conversationId"] == cid and page_config(page.text)["flushOn"] == flush_on
    assert "<b>bold</b>" not in page.text and "&lt;b&gt;bold&lt;/b&gt;" in page.text
    js = client.get("/static/chat.js").text
    assert "cfg.flushOn" in js and 'cfg.writeQueue === "latest-only"' in js


def test_a_session_lasts_its_days_on_the_apps_clock_and_not_longer(make_app) -> None:
    """Sessions age on the app's clock (as memories do), so a test that moves the clock sees them end."""
    from memchat.accounts import SESSION_DAYS

    app = make_app(settable_clock=True)
    _, client = app.user("u1")
    client.post("/api/admin/clock", json={"advance_days": SESSION_DAYS - 1 / 24}, headers=app.admin)
    assert client.get("/api/me").status_code == 200
    client.post("/api/admin/clock", json={"advance_days": 2 / 24}, headers=app.admin)
    assert client.get("/api/me").status_code == 401
