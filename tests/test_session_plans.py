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
    ("memchat", False, 60, 3, "20261130"): "7c5b5b1a0e70413d3f08dc3689c73f29",
    ("memchat", True, 60, 3, "7"): "d24e881cb6efeae376e7239e2fb10261",
    ("khoj", True, 60, 3, "1"): "a8e6bd389a527410c4e3d8cc46143053",
    ("letta", True, 60, 3, "2"): "df77e030b98ba9aece50e499d6c681e4",
    ("open-webui", False, 60, 3, "3"): "9efc2f7fae64b22affd9a55cf0e3424d",
    ("memchat", False, 300, 4, "3"): "53c0cfbeac3ccd88cabc3e897ca14351",
    ("khoj", True, 300, 4, "42"): "b6d938ad83bc1524747c59b0372d52a8",
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
