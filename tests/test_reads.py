"""The pure parts of the checks of every read: order to the app's clock resolution, what a held session tells, and
what of another user's data an answer gives."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

from harness.browser.held_session import HeldSession, jwt_expiry
from harness.drivers.base import ApiAnswer
from harness.users.foreign_reads import leaks
from harness.vocabulary.order import exactly_but_ties, out_of_order

SPANS = {"a": (1.0, 1.1), "b": (2.0, 2.1), "c": (3.0, 3.1)}


def test_a_list_in_order_passes_and_one_out_of_order_is_named() -> None:
    assert out_of_order(["c", "b", "a"], SPANS, newest_first=True) == []
    assert out_of_order(["a", "b", "c"], SPANS, newest_first=False) == []
    assert out_of_order(["b", "c", "a"], SPANS, newest_first=True) == [("b", "c")]
    assert out_of_order(["a", "c", "b"], SPANS, newest_first=False) == [("c", "b")]


def test_items_made_within_the_apps_clock_resolution_may_come_either_way() -> None:
    assert out_of_order(["b", "c", "a"], SPANS, newest_first=True, resolution_s=1.0) == []
    assert out_of_order(["a", "c", "b"], SPANS, newest_first=True, resolution_s=0.5) != []
    assert out_of_order(["x", "a"], SPANS, newest_first=True) == []  # an item of no known span is not judged


def test_a_list_is_exactly_the_expected_one_but_for_swaps_within_the_clock_resolution() -> None:
    expected = ["a", "b", "c"]
    assert exactly_but_ties(["a", "b", "c"], expected, {}, 0.0)
    assert not exactly_but_ties(["b", "a", "c"], expected, SPANS, 0.0)  # an exact clock: the exact order
    assert exactly_but_ties(["b", "a", "c"], expected, SPANS, 1.0)  # a and b made within a second of each other
    assert not exactly_but_ties(["c", "b", "a"], expected, SPANS, 1.0)  # a and c two seconds apart
    assert not exactly_but_ties(["b", "a", "c"], expected, {"a": SPANS["a"]}, 1.0)  # b's making unknown: exact
    assert not exactly_but_ties(["b", "a"], expected, SPANS, 1.0)  # one missing
    assert not exactly_but_ties(["b", "a", "a"], ["a", "b", "a"], SPANS, 1.0)  # a text twice: exact


def _jwt(exp: datetime) -> str:
    part = base64.urlsafe_b64encode(json.dumps({"id": "u1", "exp": int(exp.timestamp())}).encode()).decode()
    return f"eyJhbGciOiJIUzI1NiJ9.{part.rstrip('=')}.c2lnbmF0dXJlLXNpZ25hdHVyZQ"


def test_a_held_session_tells_its_lifetime_and_where_scripts_can_read_it() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    token = _jwt(now + timedelta(days=28))
    assert jwt_expiry(token) == now + timedelta(days=28)
    state = {"cookies": [{"name": "token", "value": token, "domain": "127.0.0.1", "expires": -1, "httpOnly": True},
                         {"name": "theme", "value": "dark", "domain": "127.0.0.1", "httpOnly": False}],
             "origins": [{"origin": "http://127.0.0.1:8080", "localStorage": [{"name": "token", "value": token}]}]}
    held = HeldSession.of(state, "http://127.0.0.1:8080")
    assert held.tokens == [token] and held.lifetime(now) == timedelta(days=28)
    assert held.readable_by_scripts() == ["local storage token"]
    cookie = HeldSession.of({"cookies": [{"name": "s", "value": "x" * 43, "domain": "127.0.0.1", "httpOnly": True,
                                          "expires": (now + timedelta(days=30)).timestamp()}]}, "http://127.0.0.1:1")
    assert cookie.readable_by_scripts() == [] and cookie.lifetime(now) == timedelta(days=30)
    assert HeldSession.of({"cookies": [{"name": "s", "value": "x" * 43, "domain": "127.0.0.1", "expires": -1}]},
                          "http://127.0.0.1:1").lifetime(now) == timedelta(0)  # ends with the browser


def test_an_answer_that_gives_another_users_text_is_a_leak_named_by_what_was_asked() -> None:
    answers = {"GET /v1/messages/": ApiAnswer(200, json.dumps([{"content": "My secret word is “walrus”."}])),
               "conversation c1": ApiAnswer(404, "not found")}
    assert leaks(answers, {"My secret word is “walrus”.", "short"}) == [
        "GET /v1/messages/: 'My secret word is “walrus”.'"]
    assert leaks(answers, {"My bank PIN is 8080."}) == []
