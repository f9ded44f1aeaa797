"""An app as the parts it implements: a driver declares once what it lacks and why, offers the rest, implements
each offered part; a skip names the part and the reason; a driver written before parts is refused in one line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.app.app_handle import AppHandle
from harness.app.app_launcher import RunningApp
from harness.app.target import load_target
from harness.drivers import load_driver, shipped_drivers
from harness.drivers.base import (
    AppDriver,
    AppLacks,
    Capability,
    DriverError,
    HeldSessions,
    MemoryRemains,
    MovableClock,
    NotBuilt,
    StoreReads,
    driver_class_errors,
)
from harness.drivers.base.parts import PART_OF, PARTS
from harness.drivers.memchat import MemchatDriver

SHIPPED_TARGETS = ("memchat", "open-webui", "letta", "khoj")


class _Core(AppDriver):
    """The core every driver has, and nothing else."""

    name = "core"

    def start(self, **_: object) -> RunningApp:  # type: ignore[override]
        raise NotImplementedError

    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        raise NotImplementedError

    def create_user(self, *_: object) -> object:  # type: ignore[override]
        raise NotImplementedError

    def delete_user(self, *_: object) -> None:  # type: ignore[override]
        raise NotImplementedError

    def session(self, *_: object) -> object:  # type: ignore[override]
        raise NotImplementedError

    def browser_state(self, *_: object) -> dict:  # type: ignore[override]
        raise NotImplementedError


def test_every_capability_belongs_to_a_part_and_every_shipped_driver_implements_what_it_offers() -> None:
    assert set(PART_OF) == set(Capability)
    for name in SHIPPED_TARGETS:
        driver = type(load_driver(load_target(name)))
        assert driver_class_errors(driver) == [], name
        assert driver.capabilities == frozenset(Capability) - driver.lacks.keys()
        for capability, lack in driver.lacks.items():
            assert lack.why, f"{name} lacks {capability.name} without saying why"
            if isinstance(lack, AppLacks):
                assert lack.source, f"{name} says the app lacks {capability.name} without where that shows"
    assert sorted(shipped_drivers()) == ["khoj", "letta", "memchat", "open-webui"]


def test_a_driver_written_before_parts_fails_to_load_in_one_line_pointing_at_the_guide(tmp_path: Path,
                                                                                         monkeypatch) -> None:
    (tmp_path / "old_team_driver.py").write_text(
        "from harness.drivers.base import Capability\n"
        "from tests.test_parts import _Core\n"
        "class OldDriver(_Core):\n"
        "    name = 'old'\n"
        "    capabilities = frozenset({Capability.CHAT_API})\n"
        "DRIVER = OldDriver\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DriverError) as info:
        load_driver(dataclasses.replace(load_target("memchat"), driver="old_team_driver"))
    said = str(info.value)
    assert "\n" not in said and "lists `capabilities`" in said and "lacks" in said and "docs/targets.md" in said


def test_an_offered_part_not_implemented_and_a_lacked_part_implemented_are_each_named() -> None:
    lacking_all = {c: NotBuilt("not yet") for c in PARTS if c not in (Capability.CHAT_API, Capability.SERVER_SIGN_OUT)}

    class Offers(_Core):  # offers chatting through the API, so it must answer whether a held session is taken
        name = "offers"
        lacks = lacking_all

    assert [e.split(" but ")[0] for e in driver_class_errors(Offers)] == ["the offers driver offers CHAT_API",
                                                                          "the offers driver offers SERVER_SIGN_OUT"]
    assert "does not implement accepts, made_up_credentials: implement them, or declare it in `lacks`" in \
        driver_class_errors(Offers)[0]

    class Stale(MemchatDriver):  # implements every part, yet declares it lacks the clock
        lacks = {**MemchatDriver.lacks, Capability.MOVABLE_CLOCK: NotBuilt("stale")}

    assert driver_class_errors(Stale) == ["the memchat driver declares it lacks MOVABLE_CLOCK yet implements its part: "
                                          "take it out of `lacks`; see docs/targets.md, 'A third app'"]


class _Handle(AppHandle):
    def __init__(self, driver: AppDriver) -> None:  # no app behind it: only what it offers is asked
        self.driver = driver

    @property
    def name(self) -> str:
        return self.driver.name


def test_a_skip_names_the_part_and_whether_the_app_lacks_it_or_the_suite_has_not_built_it() -> None:
    khoj = _Handle(load_driver(load_target("khoj")))
    with pytest.raises(pytest.skip.Exception) as lacked:
        khoj.require(Capability.PASSWORD_SIGN_IN)
    assert str(lacked.value) == ("needs a sign-in with a password through the app's API (accounts and sign-in), which "
                                 "khoj lacks: its users have no password: they sign in with a code sent to their "
                                 "address (khoj/routers/auth.py, login_magic_link)")
    with pytest.raises(pytest.skip.Exception) as unbuilt:
        khoj.part(MovableClock)
    assert str(unbuilt.value).startswith("needs a clock the test can move (clock), which the suite has not built for "
                                         "khoj yet: libfaketime")


def test_a_part_is_the_driver_where_any_capability_whose_part_includes_it_is_offered() -> None:
    letta = load_driver(load_target("letta"))
    assert _Handle(letta).part(MemoryRemains) is letta and _Handle(letta).part(StoreReads) is letta
    owui = load_driver(load_target("open-webui"))
    assert _Handle(owui).part(MemoryRemains) is owui and _Handle(owui).part(HeldSessions) is owui
    with pytest.raises(pytest.skip.Exception) as info:
        _Handle(owui).part(StoreReads)
    assert "direct access to the app's databases (store reads), which the suite has not built" in str(info.value)


def test_the_app_handle_has_no_method_that_only_checks_a_capability_and_calls_the_driver() -> None:
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(AppHandle))
    forwarders = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        checks = [s for s in body if "require" in ast.unparse(s) or "offers" in ast.unparse(s)]
        calls = [s for s in body if "self.driver." in ast.unparse(s)]
        if checks and calls and len(body) == len(checks) + len(calls):
            forwarders.append(node.name)
    assert forwarders == []
