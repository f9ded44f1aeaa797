"""A user's session of memchat through its JSON API, with the cookie its sign-in sets: chat, memories and conversations,
as the page's own calls make them."""

from __future__ import annotations

from harness.app.target import Target
from harness.drivers.base import (
    Account,
    ApiAnswer,
    DriverError,
    Hit,
    Memory,
    Reply,
    UserSession,
)
from harness.drivers.memchat.api import (
    ANSWERED,
    check,
)
from harness.services.http_clients import client
from harness.vocabulary.turn import Turn


class MemchatSession(UserSession):
    def __init__(self, target: Target, base_url: str, account: Account) -> None:
        self.target = target
        self.account = account
        self.http = client(base_url=base_url, timeout=30)
        check(self.http.post(target.api["login"], json={"email": account.email, "password": account.password}),
               f"signing in {account.email}")

    def cookies(self) -> list[dict]:
        """The session cookie(s), in Playwright's storage_state shape."""
        return [{"name": c.name, "value": c.value, "domain": c.domain.lstrip(".") or "127.0.0.1",
                 "path": c.path or "/", "expires": c.expires or -1, "httpOnly": True, "secure": False,
                 "sameSite": "Lax"} for c in self.http.cookies.jar]

    def conversation_ids(self) -> list[str]:
        return list(self.conversation_titles())

    def _listed(self, field: str) -> dict[str, str]:
        """One field of each listed conversation, by id, newest first."""
        data = check(self.http.get(self.target.api["conversations"]), "listing conversations")
        return {c["id"]: c[field] for c in data["conversations"]}

    def conversation_titles(self) -> dict[str, str]:
        return self._listed("title")

    def conversation_previews(self) -> dict[str, str]:
        return self._listed("preview")

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(self.target.path_of("messages", conversation_id=conversation_id))
        return ApiAnswer(resp.status_code, resp.text)

    def turns(self, conversation_id: str) -> list[Turn]:
        resp = self.http.get(self.target.path_of("messages", conversation_id=conversation_id))
        return [Turn(m["role"], m["text"]) for m in check(resp, "reading messages")["messages"]]

    def memories(self) -> list[Memory]:
        data = check(self.http.get(self.target.api["memories"]), "listing memories")
        return [Memory(m["id"], m["text"]) for m in data["memories"]]

    def remember(self, texts: list[str], conversation_id: str | None = None) -> None:
        body = {"items": texts, **({"conversation_id": conversation_id} if conversation_id else {})}
        stored = check(self.http.post(self.target.api["memories"], json=body), "writing memories", 201)["stored"]
        if len(set(stored)) != len(texts):  # memchat/README.md: {"stored": [id, ...]}, one per item
            raise DriverError(f"writing {len(texts)} memories: memchat answered {len(set(stored))} distinct ids "
                              f"{stored[:5]}")

    def search(self, query: str, k: int) -> list[Hit]:
        data = check(self.http.get(self.target.api["memory_search"], params={"q": query, "k": k}),
                      f"searching memory for {query[:60]!r}")
        hits = [Hit(h["id"], float(h["score"]), h["text"]) for h in data["results"]]
        scores = [h.score for h in hits]
        if len(hits) > k or scores != sorted(scores, reverse=True):  # memchat/README.md: at most k, best first
            raise DriverError(f"searching memory for {query[:60]!r} with k={k}: memchat answered {len(hits)} results "
                              f"scored {scores}, where it promises at most {k}, best first")
        return hits

    def seed_conversation(self, sentence: str) -> str:
        """Tell the assistant through the API, and write what it says to remember, as the front end would."""
        conversation_id = self.start_conversation()
        self.send(conversation_id, sentence)
        return conversation_id

    # -- the chat as memchat's own front end speaks it (its API: the page is one client of it) ---------------------
    def start_conversation(self) -> str:
        made = check(self.http.post(self.target.api["conversations"], json={"title": ""}),
                      "creating a conversation", 201)["conversation"]
        listed = check(self.http.get(self.target.api["conversations"]), "listing conversations")["conversations"]
        if not listed or listed[0] != made:  # memchat/README.md: listed newest first, as the create answered it
            raise DriverError(f"creating a conversation: memchat answered {made}, and lists first "
                              f"{listed[0] if listed else 'nothing'}")
        return str(made["id"])

    def send(self, conversation_id: str, text: str) -> Reply:
        """One turn; what the assistant says to remember is written as the front end writes it (memchat's server
        leaves memory writes to its clients), in requests of at most 50."""
        turn = check(self.http.post(self.target.path_of("messages", conversation_id=conversation_id),
                                     json={"text": text}), "sending a message")
        said = (turn["message"]["role"], turn["message"]["text"], turn["reply"]["role"])
        if said != ("user", text, "assistant"):  # memchat/README.md: the message as sent, and the reply to it
            raise DriverError(f"sending {text[:60]!r}: memchat answered the message and reply as {said}")
        for start in range(0, len(turn["remember"]), 50):
            self.remember(turn["remember"][start:start + 50], conversation_id)
        return Reply(turn["reply"]["text"], tuple(r["text"] for r in turn["recalled"]),
                     tuple(r["id"] for r in turn["recalled"]))

    def credentials(self) -> dict:
        return {"cookies": self.cookies(), "origins": []}

    def request(self, method: str, path: str, *, json: object = None,
                headers: dict[str, str] | None = None) -> ApiAnswer:
        resp = self.http.request(method, path, json=json, headers=headers)
        if resp.status_code not in ANSWERED and resp.status_code < 500:  # a 5xx is the caller's to judge
            raise DriverError(f"{method} {path}: memchat answered {resp.status_code}, which its API never answers "
                              f"(200, 201 or 204, a refusal 4xx): {resp.text[:300]}")
        return ApiAnswer(resp.status_code, resp.text)

    # -- what users take back: the calls memchat's memories page and conversation list make ------------------------
    def delete_memory(self, memory_id: str) -> None:
        check(self.http.delete(self.target.path_of("memory", memory_id=memory_id)), "deleting a memory", 204)

    def edit_memory(self, memory_id: str, text: str) -> None:
        edited = check(self.http.put(self.target.path_of("memory", memory_id=memory_id), json={"text": text}),
                        "editing a memory")["memory"]
        listed = check(self.http.get(self.target.api["memories"]), "listing memories")["memories"]
        if edited not in listed or edited["id"] != memory_id:  # memchat/README.md: the memory as the list gives it
            raise DriverError(f"editing memory {memory_id}: memchat answered {edited}, which its list does not hold "
                              "as it is")

    def clear_memories(self) -> None:
        listed = len(self.memories())
        deleted = check(self.http.delete(self.target.api["memories"]), "clearing memories")["deleted"]
        if not isinstance(deleted, int) or deleted < listed:  # memchat/README.md: N counts them all, expired ones too
            raise DriverError(f"clearing memories: memchat answered {{'deleted': {deleted!r}}} where {listed} were "
                              "listed just before")

    def delete_conversation(self, conversation_id: str) -> None:
        check(self.http.delete(self.target.path_of("conversation", conversation_id=conversation_id)),
               "deleting a conversation", 204)

    def set_memory(self, enabled: bool) -> None:
        check(self.http.put(self.target.api["settings"], json={"memory": enabled}), "saving the memory setting")

    def memory_setting(self) -> bool | None:
        return check(self.http.get(self.target.api["settings"]), "reading the memory setting")["settings"]["memory"]

    def close(self) -> None:
        self.http.close()
