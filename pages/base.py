"""What every page object shares: finding elements from the target's locator table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from playwright.sync_api import Locator, Page, expect


class UnknownLocator(KeyError):
    pass


def locate(root: Page | Locator, spec: Mapping[str, Any]) -> Locator:
    """A locator from a spec: {testid}, {role, name}, {label} or {css}; role and label match names exactly."""
    if "testid" in spec:
        return root.get_by_test_id(spec["testid"])
    if "role" in spec:
        return root.get_by_role(spec["role"], name=spec.get("name"), exact=True)
    if "label" in spec:
        return root.get_by_label(spec["label"], exact=True)
    if "css" in spec:
        return root.locator(spec["css"])
    raise ValueError(f"locator spec {dict(spec)} needs one of testid, role, label, css")


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

    def el(self, name: str, within: Locator | None = None) -> Locator:
        return locate(within if within is not None else self.page, self.spec(name))

    def reveal(self, name: str) -> None:
        """Apps that hide parts of the screen behind a toggle (a collapsed sidebar) name it in the locator's
        `reveal_with`; it is clicked once the page has loaded, when the element is not visible."""
        toggle = self.spec(name).get("reveal_with")
        if toggle is None:
            return
        expect(self.el(toggle)).to_be_visible()
        if not self.el(name).first.is_visible():
            self.el(toggle).click()
            expect(self.el(name).first).to_be_visible()

    def url_for(self, path_name: str, **values: str) -> str:
        return self.base_url + self._paths[path_name].format(**values)
