"""The login screen."""

from __future__ import annotations

from playwright.sync_api import expect

from pages.base import BasePage


class LoginPage(BasePage):
    def open(self) -> LoginPage:
        self.page.goto(self.url_for("login_page"))
        return self

    def log_in(self, email: str, password: str) -> None:
        self.el("login_email").fill(email)
        self.el("login_password").fill(password)
        self.el("login_submit").click()

    def refusal(self) -> str:
        """What the page says to a sign-in it refused; the sign-in form is still shown."""
        error = self.el("login_error").first
        expect(error).to_be_visible()
        self.expect_shown()
        return error.inner_text().strip()

    def expect_shown(self) -> None:
        expect(self.el("login_submit")).to_be_visible(timeout=self.shows_within_ms("login_submit"))

    def is_shown(self) -> bool:
        return self.el("login_submit").is_visible()
