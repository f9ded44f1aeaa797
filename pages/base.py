"""What every page object shares: finding elements from the target's locator table."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from playwright.sync_api import Locator, Page, expect

from pages.network_failures import once, refused_by_server


class UnknownLocator(KeyError):
    pass


def locate(root: Page | Locator, spec: Mapping[str, Any]) -> Locator:
    """A locator from a spec: {testid}, {testid, role}, {role, name}, {role, name_pattern}, {label}, {text} or
    {css}; role, label and text match exactly, `name_pattern` is a regular expression for names that carry changing
    text (a user's name). {testid, role} is an element the page names by its test id and announces by its role (an
    error said as an alert: to assistive technology as much as on screen)."""
    if "testid" in spec and "role" in spec:
        return root.get_by_test_id(spec["testid"]).and_(root.get_by_role(spec["role"]))
    if "testid" in spec:
        return root.get_by_test_id(spec["testid"])
    if "role" in spec and "name_pattern" in spec:
        return root.get_by_role(spec["role"], name=re.compile(spec["name_pattern"]))
    if "role" in spec:
        return root.get_by_role(spec["role"], name=spec.get("name"), exact=True)
    if "label" in spec:
        return root.get_by_label(spec["label"], exact=True)
    if "text" in spec:
        return root.get_by_text(spec["text"], exact=True)
    if "css" in spec:
        return root.locator(spec["css"])
    raise ValueError(f"locator spec {dict(spec)} needs one of testid, role, label, text, css")


# What a spec says of its element, not where it is.
NOT_LOCATING = frozenset({"id_attribute", "shows_within_s", "ime_key_code_229", "current_attribute"})


def css_of(spec: Mapping[str, Any]) -> str | None:
    """The spec as a CSS selector, for reads done in the page in one call: {css}, or {testid} (Playwright's default
    test id attribute); None for the others (role, label, text), which only Playwright's locators resolve."""
    locating = set(spec) - NOT_LOCATING
    if locating == {"css"}:
        return spec["css"]
    if locating == {"testid"}:
        return f'[data-testid="{spec["testid"]}"]'
    return None


class BasePage:
    def __init__(self, page: Page, base_url: str, locators: Mapping[str, Mapping[str, Any]],
                 paths: Mapping[str, str]) -> None:
        self.page = page
        self.base_url = base_url.rstrip("/")
        self._locators = locators
        self._paths = paths

    def spec(self, name: str) -> Mapping[str, Any]:
        try:
            return self._locators[name]
        except KeyError:
            raise UnknownLocator(f"the target file has no locator {name!r}") from None

    def has(self, name: str) -> bool:
        return name in self._locators

    def shows_within_ms(self, name: str) -> float | None:
        """How long the element may take to show, where its target declares it (`shows_within_s`, for a page that
        loads what it needs before it shows the element); None: Playwright's own default."""
        seconds = self.spec(name).get("shows_within_s")
        return None if seconds is None else float(seconds) * 1000

    def with_id(self, items: Locator, attribute: str, value: str) -> Locator:
        """The one of `items` whose id attribute is `value`: the same element whatever the page renders in it or
        around it next."""
        quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return items.and_(self.page.locator(f"[{attribute}={quoted}]"))

    def el(self, name: str, within: Locator | None = None) -> Locator:
        """The named element; inside `within`, or inside the element its spec names as `within`."""
        spec = self.spec(name)
        if within is None and "within" in spec:
            within = self.el(spec["within"])
        return locate(within if within is not None else self.page, spec)

    def start_busy_work(self, seconds: float) -> None:
        """Give the page's main thread `seconds` of work, as a heavy page (or a loaded machine) does: meanwhile the
        page answers nothing, not even the browser asking it to close, which then closes it without its pagehide."""
        self.page.evaluate("ms => { setTimeout(() => { const end = performance.now() + ms;"
                           " while (performance.now() < end); }, 0); }", seconds * 1000)

    def reveal(self, name: str) -> Locator:
        """The element, made visible: apps that hide parts of the screen behind a toggle (a collapsed sidebar, a
        user menu) name it in the locator's `reveal_with`, itself maybe behind another. Where the element shows even
        while closed (a sidebar's frame), `open_when` names what shows only once it is open. Waits until the element
        or one of its toggles shows, then opens what is closed."""
        element = self.el(name).first
        toggle = self.spec(name).get("reveal_with")
        if toggle is None:
            expect(element).to_be_visible()
            return element
        opened = self._opened(name)
        expect(self._any_of_chain(name)).to_be_visible()
        if not opened.is_visible():
            self.reveal(toggle).click()
            expect(opened).to_be_visible()
        return element

    def to_act_on(self, name: str) -> Locator:
        """The element, for an action (a click): revealed where the target hides it behind a toggle; otherwise as
        it is, since Playwright's action itself waits for it to be visible, stable and enabled."""
        return self.reveal(name) if "reveal_with" in self.spec(name) else self.el(name).first

    def _opened(self, name: str) -> Locator:
        return self.el(self.spec(name).get("open_when", name)).first

    def _any_of_chain(self, name: str) -> Locator:
        toggle = self.spec(name).get("reveal_with")
        opened = self._opened(name)
        return opened if toggle is None else opened.or_(self._any_of_chain(toggle)).first

    def url_for(self, path_name: str, **values: str) -> str:
        return self.base_url + self._paths[path_name].format(**values)

    def urls_of(self, path_name: str) -> re.Pattern[str]:
        """Every address of the path, whatever fills its one {placeholder} (any conversation's, any memory's), or
        its one address and any query."""
        if "{" not in self._paths[path_name]:  # a path of one address (every memory, the settings)
            return re.compile(re.escape(self.base_url + self._paths[path_name]) + r"(?:\?[^#]*)?$")
        before, _, rest = self._paths[path_name].partition("{")
        after = rest.partition("}")[2]
        return re.compile(re.escape(self.base_url + before) + r"[^/?#]+" + re.escape(after) + r"$")

    def refused_once(self, path_name: str, method: str, act: Callable[[], None], alert: str = "memories_error") -> str:
        """`act` (the click that sends a change), its `method` request to `path_name` answered once by a server error
        in the app's place (pages.network_failures); returns what the page then says in `alert`, once it says it."""
        requests, handler = self.urls_of(path_name), once(refused_by_server, method)
        self.page.route(requests, handler)
        try:
            act()
            said = self.el(alert)
            expect(said, "the page said nothing of the change the app refused").to_have_count(1)
        finally:
            self.page.unroute(requests, handler)
        return said.inner_text()
