"""Sign-in throttling: after SIGN_IN_FAILURES wrong passwords for one account from one client address within
LOCKOUT_MINUTES, that account is refused from that address, even with the right password, until the failures are
LOCKOUT_MINUTES old (by the app's clock). Counted per account *and* address, so that a stranger elsewhere cannot lock a
user out, and one address cannot try many passwords against an account; a refused attempt during the lockout is not
counted, so the lockout ends when declared however long someone keeps trying."""

from __future__ import annotations

from datetime import datetime, timedelta

from memchat.db import Pool

SIGN_IN_FAILURES = 5  # targets/memchat.toml [limits] sign_in_failures
LOCKOUT_MINUTES = 15  # targets/memchat.toml [limits] sign_in_lockout_minutes
LOCKED_OUT = f"Too many wrong passwords: sign-in is locked for {LOCKOUT_MINUTES} minutes. Try again later."


def account_key(email: str) -> str:
    """Addresses are matched case-insensitively, as the users table's unique index does."""
    return email.strip().lower()


class SignInThrottle:
    def __init__(self, pool: Pool, *, never_expires: bool = False, matches_like: bool = False) -> None:
        self.pool = pool
        self.never_expires = never_expires  # the fault lockout-never-expires: failures counted without the window
        self.matches_like = matches_like  # the fault lockout-matches-like: the address read as an ILIKE pattern

    def locked(self, email: str, address: str, now: datetime) -> bool:
        since = datetime.min.replace(tzinfo=now.tzinfo) if self.never_expires else now - timedelta(
            minutes=LOCKOUT_MINUTES)
        match = "ILIKE" if self.matches_like else "="
        with self.pool.connection() as conn:
            row = conn.execute(f"SELECT count(*) FROM sign_in_failures WHERE account {match} %s AND address = %s"
                               " AND at > %s", (account_key(email), address, since)).fetchone()
        return bool(row and row[0] >= SIGN_IN_FAILURES)

    def failed(self, email: str, address: str, now: datetime) -> None:
        with self.pool.connection() as conn:
            conn.execute("INSERT INTO sign_in_failures (account, address, at) VALUES (%s, %s, %s)",
                         (account_key(email), address, now))

    def succeeded(self, email: str, address: str) -> None:
        """A right password from the address clears what was typed wrong from there before."""
        with self.pool.connection() as conn:
            conn.execute("DELETE FROM sign_in_failures WHERE account = %s AND address = %s",
                         (account_key(email), address))
