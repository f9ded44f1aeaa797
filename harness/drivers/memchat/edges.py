"""The edges of memchat's API: each call at and past the limits memchat/README.md promises, and what it answered."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator

import httpx

from harness.app.app_launcher import (
    RunningApp,
)
from harness.drivers.base import (
    AppDriver,
    DriverError,
    EdgeAnswer,
    UserSession,
)
from harness.drivers.memchat.api import TITLE_TAKEN, admin_client, check
from harness.drivers.memchat.session import MemchatSession
from harness.services.http_clients import client


class MemchatEdges(AppDriver):
    def edge_answers(self, app: RunningApp, session: UserSession) -> list[EdgeAnswer]:
        """memchat/README.md, HTTP API: "Bodies over 64 KiB (the user import: 64 MiB) answer 413; malformed JSON or
        fields answer 400; nothing is changed then"; a user created answers 201, one whose e-mail exists 409. Each
        body limit is tried at its edge ([app] body_limit_bytes, import_body_limit_bytes): a valid body padded with
        spaces to exactly the limit, and one byte more."""
        assert isinstance(session, MemchatSession)
        limit, import_limit = int(self.target.app["body_limit_bytes"]), int(self.target.app["import_body_limit_bytes"])
        api, mine = self.target.api, session.account
        memory_id = next((m.id for m in session.memories()), "no-memory-of-hers")
        note = f"My padded note {secrets.token_hex(4)} is here."
        newcomer = {"id": f"edge-{secrets.token_hex(6)}", "email": f"edge-{secrets.token_hex(6)}@x.test",
                    "password": secrets.token_urlsafe(12)}
        too_long = "x" * (int(self.target.limits.longest_message or 4000) + 1)
        most = int(self.target.app["import_users"])

        def crowd(count: int) -> list[dict]:
            """`count` new users for an import, the last one's e-mail not an address."""
            tag = secrets.token_hex(4)
            users: list[dict] = [{"id": f"crowd-{tag}-{n}", "email": f"crowd-{tag}-{n}@x.test"} for n in range(count)]
            users[-1]["email"] = "not-an-address"
            return users

        def padded(body: object, size: int) -> bytes:
            raw = json.dumps(body).encode()
            if len(raw) > size:
                raise DriverError(f"a body of {len(raw)} bytes cannot be padded to {size}")
            return raw + b" " * (size - len(raw))

        def answer(http: httpx.Client, what: str, promised: int, method: str, path: str, body: object = None,
                   content: bytes | None = None, kept: str = "", says: str = "") -> EdgeAnswer:
            if content is None and body is not None:
                content = json.dumps(body).encode()
            resp = http.request(method, path, content=content, headers={"Content-Type": "application/json"},
                                timeout=300)
            return EdgeAnswer(what, promised, resp.status_code, resp.text[:300], kept if resp.status_code < 300 else "",
                              says)

        def chunked(http: httpx.Client, what: str, promised: int, path: str, content: bytes) -> EdgeAnswer:
            """A body sent in chunks, with no Content-Length: its size known only as it arrives."""
            def pieces() -> Iterator[bytes]:
                for start in range(0, len(content), 8192):
                    yield content[start:start + 8192]
            resp = http.post(path, content=pieces(), headers={"Content-Type": "application/json"}, timeout=300)
            return EdgeAnswer(what, promised, resp.status_code, resp.text[:300])

        def titled(http: httpx.Client, what: str, title: str, shown: str) -> EdgeAnswer:
            """A conversation created with `title`: the title its create answers and the one its list gives (the page
            names it by that list) are both `shown`, where the app cuts titles to [limits] title_length."""
            resp = http.post(api["conversations"], json={"title": title}, timeout=30)
            if resp.status_code != 201:
                return EdgeAnswer(what, 201, resp.status_code, resp.text[:300])
            made = resp.json()["conversation"]
            listed = session.conversation_titles().get(made["id"], "(not listed)")
            seen = (f"titled {len(made['title'])} and {len(listed)} characters: created as {made['title']!r}, listed "
                    f"as {listed!r}")
            return EdgeAnswer(what, 201, resp.status_code, seen,
                              says=f"titled {len(shown)} and {len(shown)} characters: created as {shown!r}, listed as "
                                   f"{shown!r}")

        def dated_by_her_turn(http: httpx.Client) -> list[EdgeAnswer]:
            """A page's write dated by one of her turns (memchat/README.md, POST /api/memories): its first item's
            place in the turn from 0 to the longest message less one, taken at that edge; one past it, far past it
            and below 0 refused, nothing written."""
            told = next(((cid, m["id"]) for cid in session.conversation_ids()
                         for m in check(http.get(self.target.path_of("messages", conversation_id=cid)), "her turns")
                         ["messages"] if m["role"] == "user"), None)
            if told is None:
                raise DriverError(f"{mine.email} has no turn to date a write by: the edges need one told first")
            cid, turn = told
            last = int(self.target.limits.longest_message or 4000) - 1
            placed = f"My placed note {secrets.token_hex(4)} is here."
            dated = [answer(http, f"a memory write dated by her turn, its first item at place {last}", 201, "POST",
                            api["memories"], body={"items": [placed], "conversation_id": cid, "turn": turn,
                                                   "first": last}, kept=placed)]
            for first in (last + 1, 1_000_000, -1):
                dated.append(answer(http, f"a memory write dated by her turn, its first item at place {first}", 400,
                                    "POST", api["memories"], body={"items": ["My misplaced note is here."],
                                                                  "conversation_id": cid, "turn": turn,
                                                                  "first": first}))
            return dated

        http = session.http
        cut = int(self.target.limits.title_length or 80)
        title = "My trip plans " + "".join(chr(ord("a") + n % 26) for n in range(cut + 1))[:cut + 1 - 14]
        title_taken = (title * (TITLE_TAKEN // len(title) + 1))[:TITLE_TAKEN]
        conversation_id = next(iter(session.conversation_ids()), "c_0")
        answers = [
            # A field the documentation requires, left out, is malformed (400), never taken as empty; an optional one
            # given is kept: a title as long as the list shows whole, and one character more, cut to that length.
            answer(http, "a turn with no text", 400, "POST",
                   self.target.path_of("messages", conversation_id=conversation_id), body={}),
            answer(http, "a memory edited with no text", 400, "PUT",
                   self.target.path_of("memory", memory_id=memory_id), body={}),
            titled(http, f"a conversation created with a title of {cut} characters", title[:cut], title[:cut]),
            titled(http, f"a conversation created with a title of {cut + 1} characters", title, title[:cut]),
            # The longest title a create takes (memchat/README.md), kept cut; one character more is refused.
            titled(http, f"a conversation created with a title of {TITLE_TAKEN} characters", title_taken,
                   title_taken[:cut]),
            answer(http, f"a conversation created with a title of {TITLE_TAKEN + 1} characters", 400, "POST",
                   api["conversations"], body={"title": title_taken + "z"}),
            answer(http, f"a memory write of exactly {limit} bytes", 201, "POST", api["memories"],
                   content=padded({"items": [note]}, limit), kept=note),
            answer(http, f"a memory write of {limit + 1} bytes", 413, "POST", api["memories"],
                   content=padded({"items": ["My oversized note is here."]}, limit + 1)),
            answer(http, "a memory write whose body is a list, not an object", 400, "POST", api["memories"],
                   body=["My listed note is here."]),
            answer(http, f"a memory edited to {len(too_long)} characters", 400, "PUT",
                   self.target.path_of("memory", memory_id=memory_id), body={"text": too_long}),
            answer(http, "the memory setting given as a word", 400, "PUT", api["settings"], body={"memory": "off"}),
            answer(http, "a setting the app does not have", 400, "PUT", api["settings"],
                   body={"memory": True, "theme": "dark"}),
            answer(http, "a memory write that is not JSON", 400, "POST", api["memories"], content=b'{"items": ['),
            answer(http, "a memory write of a blank memory", 400, "POST", api["memories"], body={"items": ["  "]}),
            *dated_by_her_turn(http),
            chunked(http, f"a memory write of {limit + 1} bytes sent in chunks, its size not declared", 413,
                    api["memories"], padded({"items": ["My streamed note is here."]}, limit + 1)),
            answer(http, "a memory write holding half of a character", 400, "POST", api["memories"],
                   content=b'{"items": ["My note \\ud800 is here."]}'),
            answer(http, "a memory write of 51 memories, one more than a write holds", 400, "POST", api["memories"],
                   body={"items": [f"My note {n} is here." for n in range(51)]}),
            answer(http, "a search of nothing", 400, "GET", f"{api['memory_search']}?q=&k=5"),
            answer(http, "a search for a number of memories that is no number", 400, "GET",
                   f"{api['memory_search']}?q=note&k=some"),
            answer(http, "a search for 0 memories", 400, "GET", f"{api['memory_search']}?q=note&k=0"),
            answer(http, "a search for 101 memories, one more than a search gives", 400, "GET",
                   f"{api['memory_search']}?q=note&k=101"),
            answer(http, "a search for 100 memories", 200, "GET", f"{api['memory_search']}?q=note&k=100"),
            # Another user's memory or conversation answers exactly as one nobody has: 404.
            answer(http, "an edit of a memory nobody has", 404, "PUT", self.target.path_of("memory", memory_id="m_0"),
                   body={"text": "My edited note is here."}),
            answer(http, "a deletion of a memory nobody has", 404, "DELETE",
                   self.target.path_of("memory", memory_id="m_0")),
            answer(http, "the turns of a conversation nobody has", 404, "GET",
                   self.target.path_of("messages", conversation_id="c_0")),
            answer(http, "a turn in a conversation nobody has", 404, "POST",
                   self.target.path_of("messages", conversation_id="c_0"), body={"text": "My turn is here."}),
            answer(http, "a deletion of a conversation nobody has", 404, "DELETE",
                   self.target.path_of("conversation", conversation_id="c_0")),
            answer(http, "the page of a conversation nobody has", 404, "GET",
                   self.target.path_of("conversation_page", conversation_id="c_0")),
            answer(http, "a memory write into a conversation nobody has", 404, "POST", api["memories"],
                   body={"items": ["My placed note is here."], "conversation_id": "c_0"}),
            # While her memory is off, a write is refused as a conflict with her choice: 409.
            answer(http, "her memory turned off", 200, "PUT", api["settings"], body={"memory": False}),
            answer(http, "a memory write while her memory is off", 409, "POST", api["memories"],
                   body={"items": ["My unwanted note is here."]}),
            answer(http, "her memory turned on again", 200, "PUT", api["settings"], body={"memory": True}),
        ]
        with client(base_url=app.base_url, timeout=30) as stranger:
            answers.append(answer(stranger, "a memory write signed in as nobody", 401, "POST", api["memories"],
                                  body={"items": ["My stray note is here."]}))
            answers.append(answer(stranger, f"a sign-in as {mine.email} with no password", 400, "POST", api["login"],
                                  body={"email": mine.email}))
        with client(base_url=app.base_url, timeout=30,
                    headers={"Authorization": "Bearer not-the-admin-token"}) as impostor:
            answers.append(answer(impostor, "a user created with a wrong admin token", 401, "POST", api["admin_users"],
                                  body={"email": newcomer["email"], "password": newcomer["password"]}))
        with admin_client(app) as admin:
            answers += [
                answer(admin, "a user whose e-mail is not an address", 400, "POST", api["admin_users"],
                       body={"email": "not-an-address", "password": newcomer["password"]}),
                answer(admin, "a user whose e-mail has an account", 409, "POST", api["admin_users"],
                       body={"email": mine.email, "password": newcomer["password"]}),
                answer(admin, "an import whose user has no e-mail", 400, "POST", api["admin_users_import"],
                       body={"users": [{"id": newcomer["id"], "password": newcomer["password"]}]}),
                answer(admin, "a user whose id is a number", 400, "POST", api["admin_users"],
                       body={"email": newcomer["email"], "password": newcomer["password"], "id": 5}),
                answer(admin, "an import whose user is a word", 400, "POST", api["admin_users_import"],
                       body={"users": ["someone"]}),
                answer(admin, "an import of nobody", 400, "POST", api["admin_users_import"], body={"users": []}),
                # An import of a user whose id, or whose e-mail, has an account: 409 naming it, nothing imported.
                answer(admin, "an import whose second user's e-mail has an account", 409, "POST",
                       api["admin_users_import"], body={"users": [newcomer, {"id": f"{newcomer['id']}-2",
                                                                              "email": mine.email.upper()}]},
                       says=f"email '{mine.email.upper()}'"),
                answer(admin, "an import whose user's id has an account", 409, "POST", api["admin_users_import"],
                       body={"users": [{"id": mine.id, "email": f"other-{newcomer['email']}"}]},
                       says=f"id '{mine.id}'"),
                # The most users an import takes, and one more ([app] import_users): the most, refused only for its
                # last user's e-mail (nothing is created), and one more, refused for its size, before any user is read.
                answer(admin, f"an import of exactly {most} users, the last one's e-mail not an address", 400, "POST",
                       api["admin_users_import"], body={"users": crowd(most)}, says=f"users[{most - 1}]"),
                answer(admin, f"an import of {most + 1} users", 400, "POST", api["admin_users_import"],
                       body={"users": crowd(most + 1)}, says=f"1 to {most} users"),
                answer(admin, "an import giving one user twice", 400, "POST", api["admin_users_import"],
                       body={"users": [newcomer, newcomer]}),
                # An e-mail is one address whatever its capitals (sign-in takes it so): given twice so, the second
                # entry is named, though neither has an account.
                answer(admin, "an import giving one e-mail twice, in other capitals", 400, "POST",
                       api["admin_users_import"], body={"users": [newcomer, {"id": f"{newcomer['id']}-2",
                                                                             "email": newcomer["email"].upper()}]},
                       says="users[1]"),
                answer(admin, f"an import of {import_limit + 1} bytes", 413, "POST", api["admin_users_import"],
                       content=padded({"users": [newcomer]}, import_limit + 1)),
                answer(admin, f"an import of exactly {import_limit} bytes", 201, "POST", api["admin_users_import"],
                       content=padded({"users": [newcomer]}, import_limit)),
            ]
            # The clock's documented refusals (memchat/README.md, the admin API), nothing moved: on a settable clock a
            # malformed time, on the wall clock any move at all (409, naming the option that allows it).
            if app.settings.get("clock") == "settable":
                answers += [
                    answer(admin, "the clock set to a time that is not ISO-8601", 400, "POST", api["admin_clock"],
                           body={"now": "next Tuesday"}, says="ISO-8601"),
                    answer(admin, "the clock moved by days given as a word", 400, "POST", api["admin_clock"],
                           body={"advance_days": "two"}, says="advance_days"),
                ]
            else:
                answers.append(answer(admin, "the wall clock moved by a day", 409, "POST", api["admin_clock"],
                                      body={"advance_days": 1}, says="--clock settable"))
            answers.append(answer(admin, "a deletion of a user nobody has", 404, "DELETE",
                                  self.target.path_of("admin_user", user_id="u_0")))
            # The account rules at their edges (memchat/accounts.py): a password of at least 8 characters, an id of
            # 1 to 64 letters, digits and _.:-
            edge_id, short_id = ("e" + secrets.token_hex(32))[:64], f"edge8-{secrets.token_hex(6)}"
            for what, promised, body in (
                    ("a user whose password is 7 characters", 400,
                     {"email": f"{short_id}@x.test", "password": "7" * 7}),
                    ("a user whose password is 8 characters", 201,
                     {"email": f"{short_id}@x.test", "password": "8" * 8, "id": short_id}),
                    ("a user whose id holds a space", 400,
                     {"email": f"spaced-{short_id}@x.test", "password": newcomer["password"], "id": "a b"}),
                    ("a user whose id is 65 characters", 400,
                     {"email": f"long-{short_id}@x.test", "password": newcomer["password"], "id": edge_id + "e"}),
                    ("a user whose id is 64 characters", 201,
                     {"email": f"long-{short_id}@x.test", "password": newcomer["password"], "id": edge_id})):
                answers.append(answer(admin, what, promised, "POST", api["admin_users"], body=body))
            answers += [answer(admin, f"a deletion of the user {uid} made above", 200, "DELETE",
                               self.target.path_of("admin_user", user_id=uid))
                        for uid in (newcomer["id"], short_id, edge_id)]
        return answers
