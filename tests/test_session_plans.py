"""The seeds of the generated sessions draw the plans they drew: a digest of a few plans pinned, so that a change to
harness/sessions/ meant only to move code fails here where it changes what is drawn. `python -m tools.session_plans`
dumps every seed's plan to compare in full."""

from __future__ import annotations

import datetime
import hashlib

import faker.providers.date_time as faker_dates
import pytest

from tools.session_plans import drawn, line

# (target, through the API, actions, users, seed) -> the first 32 hex digits of the sha256 of its record's line: the
# short form in browsers and through the API, targets that leave moves out (no page, no clock, no failures on the
# way) and the long form.
PINNED = {
    ("memchat", False, 60, 3, "20261130"): "3f43382443e8a1b7cb333e9841905be1",
    ("memchat", True, 60, 3, "7"): "f1555ac8c00b93c4936da5002db51aac",
    ("khoj", True, 60, 3, "1"): "79a5fdb6c42097a6244b196119fdc090",
    ("letta", True, 60, 3, "2"): "6d4e3c8018c2f86e27a019c34bd17261",
    ("open-webui", False, 60, 3, "3"): "a96982feb547af90c6dc6efe41cf4209",
    ("memchat", False, 300, 4, "3"): "3276d2fb79d80ddd7516f32400afd177",
    ("khoj", True, 300, 4, "42"): "aee1c7833b5677cf936932ee92f17816",
}


@pytest.mark.parametrize("drawing", PINNED, ids=lambda d: "-".join(map(str, d)))
def test_a_seed_draws_the_plan_it_drew(drawing: tuple[str, bool, int, int, str]) -> None:
    record = drawn(*drawing)
    assert "error" not in record, record["error"]
    digest = hashlib.sha256(line(record).encode()).hexdigest()[:32]
    assert digest == PINNED[drawing], (
        f"{drawing}: the plan drawn changed (actions, the model's replies or what users read after them); compare "
        "`python -m tools.session_plans --out after.jsonl` with a dump of the commit before")


class _AnyOfItsBase(type):
    """Values made with the real classes still pass Faker's isinstance checks against the stand-ins."""

    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, cls.__mro__[1])


class _LaterDay(datetime.datetime, metaclass=_AnyOfItsBase):
    """Faker's idea of now, 400 days on (a seed run again next year)."""

    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> _LaterDay:  # type: ignore[override]
        return cls.fromtimestamp(datetime.datetime.now(tz).timestamp() + 400 * 86400, tz)


class _LaterDate(datetime.date, metaclass=_AnyOfItsBase):
    @classmethod
    def today(cls) -> _LaterDate:
        return cls.fromordinal(datetime.date.today().toordinal() + 400)


def test_a_seed_draws_the_same_plan_on_another_day(monkeypatch: pytest.MonkeyPatch) -> None:
    # Faker's relative dates ("-30y", date_this_century) count from today: a seed drew another session each day, and
    # this file's digests failed on the morning after they were pinned.
    drawing = next(iter(PINNED))
    monkeypatch.setattr(faker_dates, "datetime", _LaterDay)
    monkeypatch.setattr(faker_dates, "dtdate", _LaterDate)
    assert faker_dates.dtdate.today() != datetime.date.today()
    digest = hashlib.sha256(line(drawn(*drawing)).encode()).hexdigest()[:32]
    assert digest == PINNED[drawing], f"{drawing}: the plan drawn depends on the day it is drawn"
