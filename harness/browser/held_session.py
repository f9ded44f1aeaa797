"""What a browser holds of a signed-in session (its storage state: cookies and the app's local storage), read the way
OWASP's session-management rules look at it: how long the app lets it live, whether the page's scripts can read it,
and whether one sign-in's session differs from another's."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

_JWT = re.compile(r"^[A-Za-z0-9_-]{8,}\.([A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{8,}$")
TOKEN_MIN = 16  # a value this long or longer may carry a session; shorter ones (a theme, a language) cannot


def jwt_expiry(token: str) -> datetime | None:
    """The `exp` of a JSON Web Token, if `token` is one."""
    m = _JWT.match(token)
    if not m:
        return None
    payload = m.group(1) + "=" * (-len(m.group(1)) % 4)
    try:
        exp = json.loads(base64.urlsafe_b64decode(payload)).get("exp")
    except (ValueError, AttributeError):
        return None
    return datetime.fromtimestamp(exp, UTC) if isinstance(exp, (int, float)) else None


@dataclass(frozen=True)
class HeldSession:
    cookies: tuple[dict, ...]  # the app's cookies, in Playwright's storage_state shape
    local_storage: tuple[tuple[str, str], ...]  # the app origin's local storage (name, value)

    @classmethod
    def of(cls, storage_state: dict, base_url: str) -> HeldSession:
        host = urlsplit(base_url).hostname or ""
        origin = base_url.rstrip("/")
        cookies = tuple(c for c in storage_state.get("cookies", []) if c.get("domain", "").lstrip(".") == host)
        local = tuple((i["name"], i["value"]) for o in storage_state.get("origins", []) if o.get("origin") == origin
                      for i in o.get("localStorage", []))
        return cls(cookies, local)

    @property
    def tokens(self) -> list[str]:
        """The values that may carry the session: long cookie values, and long values in local storage."""
        found = [c["value"] for c in self.cookies if len(c.get("value", "")) >= TOKEN_MIN]
        found += [v for _, v in self.local_storage if len(v) >= TOKEN_MIN and (v in found or jwt_expiry(v))]
        return list(dict.fromkeys(found))

    def lifetime(self, now: datetime) -> timedelta:
        """How long the app lets this session live from `now`: the latest expiry of a cookie or token carrying it
        (a cookie without an expiry ends with the browser: no lifetime)."""
        ends = [datetime.fromtimestamp(c["expires"], UTC) for c in self.cookies
                if len(c.get("value", "")) >= TOKEN_MIN and c.get("expires", -1) > 0]
        ends += [e for t in self.tokens if (e := jwt_expiry(t)) is not None]
        return max((e - now for e in ends), default=timedelta(0))

    def readable_by_scripts(self) -> list[str]:
        """Where the page's scripts can read the session: a cookie without HttpOnly, a token in local storage."""
        tokens = set(self.tokens)
        found = [f"cookie {c['name']} (not HttpOnly)" for c in self.cookies
                 if c.get("value") in tokens and not c.get("httpOnly")]
        found += [f"local storage {name}" for name, value in self.local_storage if value in tokens]
        return found
