"""The seeds of the generated sessions draw the plans they drew: a digest of a few plans pinned, so that a change to
harness/sessions/ meant only to move code fails here where it changes what is drawn. `python -m tools.session_plans`
dumps every seed's plan to compare in full."""

from __future__ import annotations

import hashlib

import pytest

from tools.session_plans import drawn, line

# (target, through the API, actions, users, seed) -> the first 32 hex digits of the sha256 of its record's line: the
# short form in browsers and through the API, targets that leave moves out (no page, no clock, no failures on the
# way) and the long form.
PINNED = {
    ("memchat", False, 60, 3, "20261130"): "a102c88fa6e251c9179bbd860e033614",
    ("memchat", True, 60, 3, "7"): "47bf081e88f72d851646f80d8e2795a7",
    ("khoj", True, 60, 3, "1"): "1e2244b541c16b03566678feff12d16e",
    ("letta", True, 60, 3, "2"): "e5d26146e6a0b5e7f025455be0bd6838",
    ("open-webui", False, 60, 3, "3"): "40acb48415812a0850213ae179704600",
    ("memchat", False, 300, 4, "3"): "3f23ea42bacd303ea9054b24c858ee45",
    ("khoj", True, 300, 4, "42"): "987285e644000d870ef4f3ac5d15fb34",
}


@pytest.mark.parametrize("drawing", PINNED, ids=lambda d: "-".join(map(str, d)))
def test_a_seed_draws_the_plan_it_drew(drawing: tuple[str, bool, int, int, str]) -> None:
    record = drawn(*drawing)
    assert "error" not in record, record["error"]
    digest = hashlib.sha256(line(record).encode()).hexdigest()[:32]
    assert digest == PINNED[drawing], (
        f"{drawing}: the plan drawn changed (actions, the model's replies or what users read after them); compare "
        "`python -m tools.session_plans --out after.jsonl` with a dump of the commit before")
