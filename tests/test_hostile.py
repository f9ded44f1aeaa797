"""The hostile users' writes (harness.users.hostile), without an app: which writes are tried, with what, and how answers
are judged."""

from __future__ import annotations

import json

import pytest

from harness.app.target import Target, load_target
from harness.drivers.base import Account, ApiAnswer, Memory, UserSession
from harness.users.hostile import IDENTITY_HEADERS, Holdings, Victim, cannot_tamper, tamper
from harness.vocabulary.turn import Turn

VICTIM = Victim("u_ana", "ana@x.test", ("m_1",), ("c_1",))


class FakeSession(UserSession):
    """Answers every write with `status`; a memory created with a body naming another lands with them."""

    def __init__(self, status: int, steals: bool = False) -> None:
        self.account = Account("u_ben", "ben@x.test", "pw", "Ben")
        self.status, self.steals = status, steals
        self.sent: list[tuple[str, str, object, dict]] = []
        self.own: list[str] = []

    def request(self, method: str, path: str, *, json: object = None,
                headers: dict[str, str] | None = None) -> ApiAnswer:
        self.sent.append((method, path, json, headers or {}))
        if method == "GET":
            return ApiAnswer(200, '{"user": {"id": "u_ben", "email": "ben@x.test"}}')
        if method == "POST" and path == "/api/memories" and isinstance(json, dict) and "conversation_id" not in json:
            if not (self.steals and ("user_id" in json or headers)):
                self.own += json["items"]
            return ApiAnswer(201, "{}")
        return ApiAnswer(self.status, "{}")

    def memories(self) -> list[Memory]:
        return [Memory(str(i), t) for i, t in enumerate(self.own)]

    def set_memory(self, enabled: bool) -> None:
        pass

    def conversation_ids(self) -> list[str]:
        return []

    def turns(self, conversation_id: str) -> list[Turn]:
        return []

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        return ApiAnswer(404, "")

    def remember(self, texts: list[str]) -> None:
        pass

    def search(self, query: str, k: int) -> list:
        return []

    def seed_conversation(self, sentence: str) -> str:
        return ""


@pytest.fixture(scope="module")
def memchat() -> Target:
    return load_target("memchat")


def test_every_write_is_tried_with_the_victims_ids_in_the_body_and_in_headers(memchat: Target) -> None:
    session = FakeSession(404)
    assert tamper(session, VICTIM, memchat) == []
    writes = {(m, p) for m, p, _, _ in session.sent if m != "GET"}
    assert writes == {("PUT", "/api/memories/m_1"), ("DELETE", "/api/memories/m_1"),
                      ("POST", "/api/conversations/c_1/messages"), ("POST", "/api/memories"),
                      ("PUT", "/api/settings"), ("DELETE", "/api/conversations/c_1")}
    bodies = [json.dumps(b) for _, _, b, _ in session.sent if b]
    assert any('"user_id": "u_ana"' in b for b in bodies) and any('"email": "ana@x.test"' in b for b in bodies)
    assert {h for _, _, _, headers in session.sent for h in headers} == set(IDENTITY_HEADERS)
    assert [m for m, _, _, _ in session.sent if m != "GET"][-1] == "DELETE"  # deletions last


def test_a_write_on_the_victims_object_answered_2xx_is_a_breach(memchat: Target) -> None:
    breaches = tamper(FakeSession(200), VICTIM, memchat)
    assert breaches and all(b.status == 200 for b in breaches)
    assert "PUT /api/memories/m_1" in str(breaches[0]) and "ana@x.test's memory m_1" in str(breaches[0])


def test_a_memory_of_ones_own_that_lands_elsewhere_is_a_breach(memchat: Target) -> None:
    breaches = tamper(FakeSession(404, steals=True), VICTIM, memchat)
    assert breaches and all("is not among ben@x.test's own" in b.why for b in breaches)
    assert tamper(FakeSession(404), VICTIM, memchat) == []  # landing with the writer is fine


def test_an_answer_neither_done_nor_refused_is_a_breach_even_for_a_write_of_ones_own(memchat: Target) -> None:
    breaches = tamper(FakeSession(399), VICTIM, memchat)
    assert {b.path for b in breaches} >= {"/api/settings", "/api/memories/m_1"}
    assert all(b.status == 399 for b in breaches if b.path == "/api/settings")
    assert any("neither a success (2xx) nor a refusal (4xx)" in b.why for b in breaches if b.path == "/api/settings")


def test_a_failure_is_a_breach_too(memchat: Target) -> None:
    assert all("failed instead of refusing" in b.why for b in tamper(FakeSession(500), VICTIM, memchat))


def test_a_target_that_describes_no_writes_is_named_in_one_line() -> None:
    assert "describes none of the writes" in cannot_tamper(load_target("open-webui"))
    assert "describes none of the writes" in cannot_tamper(load_target("letta"))
    assert cannot_tamper(load_target("memchat-api")) == ""


def test_holdings_name_what_changed() -> None:
    before = Holdings('[{"id": "m_1", "text": "My bank PIN is 8080."}]', (("c_1", (("user", "hi"),)),))
    after = Holdings('[{"id": "m_1", "text": "My bank PIN is 0000."}]', (("c_1", (("user", "hi"),)),))
    assert after.changes_since(before) == [f"memories were {before.memories}, now {after.memories}"]
    assert before.changes_since(before) == []
