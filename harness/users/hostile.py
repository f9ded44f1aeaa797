"""What a hostile user can write of another user's data through the app's API (OWASP API1 and API3: object- and
property-level authorization): every write the target describes (its [api] paths, its [write_bodies] bodies), sent
by one signed-in user against another's memories, conversations and settings, with the other's ids in the path, in
owner fields of the body, and in identity headers. The mirror of harness.users.foreign_reads, for writes.

What counts as a breach (docs/contract.md, "Nobody writes into another user's data"):
- a write whose path or body names the other user's object (a memory id, a conversation id) must be refused: any
  answer below 400 is a breach, whatever changed; 4xx answers (401, 403, 404 "not found", 400, 409, 422) refuse;
- a write to the writer's own collection that names the other user only in an owner field or an identity header (a
  memory created, the settings saved) may succeed if it lands in the writer's own data: a memory created so is a
  breach when its text is not among the writer's memories afterwards. A settings write is put back (the writer's
  memory on again) and left to the scenario, which checks the other user's answers;
- an answer of 500 or more is a breach too: the app failed instead of refusing, and what it wrote first is unknown;
- and so is any answer below 400 that is not a success (1xx, 3xx, say a 399): neither done nor refused, nobody can
  tell what the app did with the write.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from harness.app.target import Target, TargetError
from harness.drivers.base import DriverError, UserSession

# Owner fields an app may read from a body, besides those its own bodies show (own_field_names).
OWNER_FIELDS = ("user_id", "userId", "owner", "owner_id", "ownerId", "user", "uid", "account_id", "email")
# Identity headers a proxy-fed app may trust (an auth proxy's, or a framework's remote user).
IDENTITY_HEADERS = ("X-User-Id", "X-User-Email", "X-Forwarded-User", "X-Forwarded-Email", "X-Remote-User",
                    "Remote-User", "X-Auth-Request-User", "X-Auth-Request-Email")
# The [api] writes tamper tries, where the target describes them.
WRITES = ("memory", "messages", "memories", "settings", "conversation")


@dataclass(frozen=True)
class Victim:
    """The other user's ids, as a hostile user would have learnt them (a shared link, a leaked log)."""

    user_id: str
    email: str
    memory_ids: tuple[str, ...]
    conversation_ids: tuple[str, ...]

    @classmethod
    def of(cls, session: UserSession) -> Victim:
        return cls(session.account.id, session.account.email, tuple(m.id for m in session.memories()),
                   tuple(session.conversation_ids()))


@dataclass(frozen=True)
class Breach:
    """One write the app did not refuse: what was sent, how the app answered, and why that is a breach."""

    method: str
    path: str
    status: int
    sent: str  # the body and headers, as sent
    why: str

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.sent} -> {self.status}: {self.why}"


def kinds_of(breaches: Iterable[Breach]) -> list[str]:
    """Each kind of write not refused (method, path without its query, status) with how many: what a known defect of
    an app is held to, whatever else a failure shows in full."""
    counted = Counter(f"{b.method} {b.path.partition('?')[0]} -> {b.status}" for b in breaches)
    return [f"{kind} x{n}" for kind, n in sorted(counted.items())]


@dataclass(frozen=True)
class _Attempt:
    method: str
    path: str
    body: object
    headers: dict[str, str]
    names: str  # the victim's object the path or body names ("" for a write to the writer's own data)
    kind: str  # the [api] name of the write
    marker: str = ""  # the text a memory write of one's own should land under the writer

    @property
    def sent(self) -> str:
        headers = " ".join(f"{k}: {v}" for k, v in self.headers.items())
        return " ".join(p for p in (json.dumps(self.body) if self.body is not None else "", headers) if p)


def cannot_tamper(target: Target) -> str:
    """One line on why tamper cannot run against this target, or ""."""
    if not [w for w in WRITES if w in target.api and (w in target.write_bodies or w in ("memory", "conversation"))]:
        return (f"the {target.name} target describes none of the writes the hostile users try ([api] "
                f"{', '.join(WRITES)} with their [write_bodies])")
    return ""


def _filled(template: object, text: str, conversation_id: str | None) -> object:
    """The target's body with its placeholders filled; keys of "{conversation_id}" dropped when there is none."""
    if isinstance(template, dict):
        return {k: _filled(v, text, conversation_id) for k, v in template.items()
                if conversation_id is not None or v != "{conversation_id}"}
    if isinstance(template, list):
        return [_filled(v, text, conversation_id) for v in template]
    if isinstance(template, str):
        return template.replace("{text}", text).replace("{conversation_id}", conversation_id or "")
    return template


def _keys_holding(data: object, values: set[str]) -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str) and value in values:
                yield key
            yield from _keys_holding(value, values)
    elif isinstance(data, list):
        for value in data:
            yield from _keys_holding(value, values)


def own_field_names(attacker: UserSession, target: Target) -> list[str]:
    """The names under which the app's own answers give the writer's id or e-mail (its "me" and memory listing):
    the property names it may also read from a body."""
    mine = {attacker.account.id, attacker.account.email}
    names: list[str] = []
    for read in ("me", "memories"):
        if read in target.api:
            answer = attacker.request("GET", target.api[read])
            try:
                names += _keys_holding(json.loads(answer.body), mine) if answer.status == 200 else []
            except json.JSONDecodeError:
                continue
    return names


def _disguises(victim: Victim, fields: list[str]) -> list[tuple[dict, dict[str, str]]]:
    """(body fields, headers) naming the victim: none, each owner field, each identity header."""
    def value(name: str) -> str:
        return victim.email if "mail" in name.lower() else victim.user_id
    return ([({}, {})] + [({f: value(f)}, {}) for f in dict.fromkeys([*fields, *OWNER_FIELDS])]
            + [({}, {h: value(h)}) for h in IDENTITY_HEADERS])


def _attempts(target: Target, victim: Victim, fields: list[str]) -> Iterator[_Attempt]:
    """Every write against the victim's objects, then the writer's own writes naming the victim, deletions last (a
    deletion let through would leave nothing for the writes after it)."""
    api, bodies = target.api, target.write_bodies

    def each(method: str, kind: str, names: str, template: object, into: str | None = None,
             **path: str) -> Iterator[_Attempt]:
        for fields_, headers in _disguises(victim, fields):
            marker = f"My hostile note {secrets.token_hex(4)} is here."
            body = _filled(template, marker, into) if template is not None else None
            if fields_:
                body = {**(body if isinstance(body, dict) else {}), **fields_}
            yield _Attempt(method, target.path_of(kind, **path), body, headers, names, kind,
                           marker if kind == "memories" and not names else "")

    if "memory" in api:
        for mid in victim.memory_ids:
            if "memory" in bodies:
                yield from each("PUT", "memory", f"memory {mid}", bodies["memory"], memory_id=mid)
    if "messages" in api and "messages" in bodies:
        for cid in victim.conversation_ids:
            yield from each("POST", "messages", f"conversation {cid}", bodies["messages"], cid, conversation_id=cid)
    if "memories" in api and "memories" in bodies:
        if "{conversation_id}" in json.dumps(bodies["memories"]):
            for cid in victim.conversation_ids:
                yield from each("POST", "memories", f"conversation {cid}", bodies["memories"], cid)
        yield from each("POST", "memories", "", bodies["memories"])
    if "settings" in api and "settings" in bodies:
        yield from each("PUT", "settings", "", bodies["settings"])
    if "memory" in api:
        for mid in victim.memory_ids:
            yield from each("DELETE", "memory", f"memory {mid}", None, memory_id=mid)
    if "conversation" in api:
        for cid in victim.conversation_ids:
            yield from each("DELETE", "conversation", f"conversation {cid}", None, conversation_id=cid)


def _judged(attacker: UserSession, victim: Victim, attempt: _Attempt, status: int) -> str:
    """Why the answer is a breach, or ""."""
    if status >= 500:
        return "the app failed instead of refusing; what it wrote before failing is unknown"
    if status >= 400:
        return ""
    if not 200 <= status < 300:
        return f"the app answered {status} to a write: neither a success (2xx) nor a refusal (4xx)"
    if attempt.names:
        return f"the app did not refuse a write on {victim.email}'s {attempt.names}"
    if attempt.marker and attempt.marker not in {m.text for m in attacker.memories()}:
        return (f"the memory it wrote is not among {attacker.account.email}'s own: it went to whom the body or "
                f"header named ({victim.email})")
    if attempt.kind == "settings":
        attacker.set_memory(True)  # the writer's own switch, put back; the scenario checks the victim's answers
    return ""


def tamper(attacker: UserSession, victim: Victim, target: Target) -> list[Breach]:
    """`attacker` tries every write the target's API describes against `victim`'s memories, conversations and
    settings (the module's docstring says which answers are breaches); each one the app did not refuse."""
    fields = own_field_names(attacker, target)
    breaches = []
    for attempt in _attempts(target, victim, fields):
        answer = attacker.request(attempt.method, attempt.path, json=attempt.body, headers=attempt.headers)
        why = _judged(attacker, victim, attempt, answer.status)
        if why:
            breaches.append(Breach(attempt.method, attempt.path, answer.status, attempt.sent, why))
    return breaches


@dataclass(frozen=True)
class Holdings:
    """Everything a user's API shows of their data: each memory with every field the app lists, each conversation
    with every turn."""

    memories: str  # the memory listing as answered (every field), normalised JSON
    conversations: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    @classmethod
    def of(cls, session: UserSession, target: Target) -> Holdings:
        try:
            answer = session.request("GET", target.path_of("memories"))
            memories = json.dumps(json.loads(answer.body), sort_keys=True)
        except (DriverError, TargetError, json.JSONDecodeError):  # no call of its own, no [api] memories, no JSON
            memories = json.dumps(sorted((m.id, m.text) for m in session.memories()))
        return cls(memories, tuple((cid, tuple((t.role, t.text) for t in session.turns(cid)))
                                   for cid in session.conversation_ids()))

    def changes_since(self, before: Holdings) -> list[str]:
        """What differs from `before`, in a line each."""
        changed = []
        if self.memories != before.memories:
            changed.append(f"memories were {before.memories}, now {self.memories}")
        if self.conversations != before.conversations:
            changed.append(f"conversations were {before.conversations}, now {self.conversations}")
        return changed


def same_words(said: str, other: str) -> bool:
    """The same words, whatever their case and punctuation ("Wrong email or password." on a page, "wrong email or
    password" from an API): how an app's refusals are told apart."""
    return re.sub(r"\W+", " ", said).strip().casefold() == re.sub(r"\W+", " ", other).strip().casefold()
