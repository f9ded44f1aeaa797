"""Users, passwords (scrypt, never stored plain) and login sessions."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg

from memchat.db import Pool

SESSION_DAYS = 30
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}$")
_USER_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")


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
    try:
        _, salt, digest = stored.split("$")
        actual = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=2**14, r=8, p=1)
    except ValueError:
        return False
    return hmac.compare_digest(actual, base64.b64decode(digest))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    def create(self, email: str, password: str, user_id: str | None = None) -> User:
        email = email.strip()
        if not _EMAIL.match(email):
            raise AccountError("email must look like name@domain")
        if len(password) < 8:
            raise AccountError("password must have at least 8 characters")
        if user_id is not None and not _USER_ID.match(user_id):
            raise AccountError("id may hold letters, digits and _.:- only (1-64)")
        uid = user_id or "u_" + uuid.uuid4().hex[:16]
        try:
            with self.pool.connection() as conn:
                conn.execute("INSERT INTO users (id, email, password_hash) VALUES (%s, %s, %s)",
                             (uid, email, hash_password(password)))
        except psycopg.errors.UniqueViolation:
            raise AccountError("a user with that email or id exists already") from None
        return User(uid, email)

    def delete(self, user_id: str) -> bool:
        with self.pool.connection() as conn:
            return conn.execute("DELETE FROM users WHERE id = %s", (user_id,)).rowcount > 0

    def by_email(self, email: str) -> User | None:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT id, email FROM users WHERE lower(email) = lower(%s)",
                               (email.strip(),)).fetchone()
        return User(*row) if row else None

    def authenticate(self, email: str, password: str) -> User | None:
        with self.pool.connection() as conn:
            row = conn.execute("SELECT id, email, password_hash FROM users WHERE lower(email) = lower(%s)",
                               (email.strip(),)).fetchone()
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
