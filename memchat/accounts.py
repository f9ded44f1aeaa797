"""Users, passwords (scrypt, never stored plain) and login sessions."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg

from memchat.db import Pool

SESSION_DAYS = 30
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}$")
_USER_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")
# The stored hash of a user imported without a password: not of the form "scrypt$salt$digest", so no password matches.
NO_PASSWORD = "!"
MAX_IMPORT = 100_000


class AccountError(ValueError):
    pass


@dataclass(frozen=True)
class User:
    id: str
    email: str

    def as_json(self) -> dict:
        return {"id": self.id, "email": self.email}


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return "scrypt$" + base64.b64encode(salt).decode() + "$" + base64.b64encode(digest).decode()


def check_password(password: str, stored: str) -> bool:
    if not stored.startswith("scrypt$"):
        return False  # NO_PASSWORD: sign-in is refused as for a wrong password
    try:
        _, salt, digest = stored.split("$")
        actual = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=2**14, r=8, p=1)
    except ValueError:
        return False
    return hmac.compare_digest(actual, base64.b64decode(digest))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_new_user(email: str, password: str | None, user_id: str | None) -> str:
    """The e-mail as stored (trimmed); raises AccountError when the e-mail, password or id breaks the rules."""
    email = email.strip()
    if not _EMAIL.match(email):
        raise AccountError("email must look like name@domain")
    if password is not None and len(password) < 8:
        raise AccountError("password must have at least 8 characters")
    if user_id is not None and not _USER_ID.match(user_id):
        raise AccountError("id may hold letters, digits and _.:- only (1-64)")
    return email


@dataclass(frozen=True)
class NewUser:
    """One user of a bulk import, already checked with check_new_user; no password: the user cannot sign in."""
    id: str
    email: str
    password: str | None = None


def _hash_or_none(password: str | None) -> str:
    return hash_password(password) if password is not None else NO_PASSWORD


class Accounts:
    def __init__(self, pool: Pool, *, match_like: bool = False) -> None:
        self.pool = pool
        self.match_like = match_like  # the fault sign-in-matches-like: "_" and "%" of a typed address are wildcards

    def create(self, email: str, password: str, user_id: str | None = None) -> User:
        email = check_new_user(email, password, user_id)
        uid = user_id or "u_" + uuid.uuid4().hex[:16]
        try:
            with self.pool.connection() as conn:
                conn.execute("INSERT INTO users (id, email, password_hash) VALUES (%s, %s, %s)",
                             (uid, email, hash_password(password)))
        except psycopg.errors.UniqueViolation:
            raise AccountError("a user with that email or id exists already") from None
        return User(uid, email)

    def import_users(self, users: list[NewUser]) -> int:
        """Create all of `users` in one transaction (COPY), or none: raises AccountError naming the first id or
        e-mail, in the given order, that exists already. Ids and e-mails must be unique within `users`."""
        with self.pool.connection() as conn:
            taken = conn.execute(
                "SELECT id, lower(email) FROM users WHERE id = ANY(%s) OR lower(email) = ANY(%s)",
                ([u.id for u in users], [u.email.lower() for u in users])).fetchall()
        if taken:  # checked before hashing: a refused import costs no scrypt
            ids, emails = {r[0] for r in taken}, {r[1] for r in taken}
            first = next(u for u in users if u.id in ids or u.email.lower() in emails)
            which = f"id '{first.id}'" if first.id in ids else f"email '{first.email}'"
            raise AccountError(f"a user with {which} exists already; nothing was imported")
        # hashlib.scrypt holds the GIL on CPython 3.11 (measured: two threads no faster than one), so the pool only
        # helps where it is released; users without a password cost nothing here.
        with ThreadPoolExecutor(max_workers=4) as workers:
            hashes = list(workers.map(_hash_or_none, [u.password for u in users]))
        try:
            with self.pool.transaction() as conn, conn.cursor() as cur:
                with cur.copy("COPY users (id, email, password_hash) FROM STDIN") as copy:
                    for user, hashed in zip(users, hashes, strict=True):
                        copy.write_row((user.id, user.email, hashed))
        except psycopg.errors.UniqueViolation:  # created by someone else since the check above
            raise AccountError("a user with one of these ids or emails exists already; nothing was imported") from None
        return len(users)

    def delete(self, user_id: str) -> bool:
        with self.pool.connection() as conn:
            return conn.execute("DELETE FROM users WHERE id = %s", (user_id,)).rowcount > 0

    def memory_enabled(self, user_id: str) -> bool:
        """The user's memory switch (on unless they turned it off)."""
        with self.pool.connection() as conn:
            row = conn.execute("SELECT memory_enabled FROM users WHERE id = %s", (user_id,)).fetchone()
        return bool(row and row[0])

    def set_memory_enabled(self, user_id: str, enabled: bool) -> bool:
        """Turn the user's memory on or off; returns the setting as stored."""
        with self.pool.connection() as conn:
            row = conn.execute("UPDATE users SET memory_enabled = %s WHERE id = %s RETURNING memory_enabled",
                               (enabled, user_id)).fetchone()
        return bool(row and row[0])

    def by_email(self, email: str) -> User | None:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT id, email FROM users WHERE lower(email) = lower(%s)",
                               (email.strip(),)).fetchone()
        return User(*row) if row else None

    def authenticate(self, email: str, password: str) -> User | None:
        match = ("email ILIKE %s ORDER BY created_at, id LIMIT 1" if self.match_like  # the oldest account that matches
                 else "lower(email) = lower(%s)")
        with self.pool.connection() as conn:
            row = conn.execute(f"SELECT id, email, password_hash FROM users WHERE {match}", (email.strip(),)).fetchone()
        if row and check_password(password, row[2]):
            return User(row[0], row[1])
        return None

    def open_session(self, user: User, now: datetime) -> str:
        token = secrets.token_urlsafe(32)
        with self.pool.connection() as conn:
            conn.execute("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES (%s, %s, %s)",
                         (_token_hash(token), user.id, now + timedelta(days=SESSION_DAYS)))
        return token

    def close_session(self, token: str) -> None:
        with self.pool.connection() as conn:
            conn.execute("DELETE FROM sessions WHERE token_hash = %s", (_token_hash(token),))

    def user_for_session(self, token: str, now: datetime) -> User | None:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT u.id, u.email FROM sessions s JOIN users u ON u.id = s.user_id"
                " WHERE s.token_hash = %s AND s.expires_at > %s", (_token_hash(token), now)).fetchone()
        return User(*row) if row else None
