"""A user's session of Letta through its REST API, every request as the user's id: conversations, archival memory,
chat through the agent loop, what users take back, and every read that could reach another user's data."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account, ApiAnswer, Hit, Memory, Reply, UserSession
from harness.drivers.letta.api import (
    BROAD_QUERY,
    CONVERSATION_PAGE,
    HTTP_TIMEOUT,
    LISTING,
    MAX_STEPS,
    PAGE,
    READERS,
    SEARCH_TOOL,
    SEND_TIMEOUT,
    _check,
    _content,
    _done,
    _is_turn,
)
from harness.services.http_clients import client
from harness.vocabulary.turn import Turn
from model_server.agent import found_memories


class LettaSession(UserSession):
    """What one user does through Letta's API: every request carries the user's id, and nothing else."""

    def __init__(self, app: RunningApp, account: Account, agent_id: str,
                 peer: Callable[[Account], LettaSession]) -> None:
        self.account = account
        self.agent_id = agent_id
        self._peer = peer  # another user's own session, to learn the ids of their data as they would see them
        self.http = client(base_url=app.base_url, timeout=HTTP_TIMEOUT,
                           headers={"user_id": account.id})

    # -- lists, every page ---------------------------------------------------------------------------------------
    def _pages(self, path: str, params: dict[str, Any], page: int, what: str) -> Iterator[dict]:
        """Every item of a list Letta pages with an `after` cursor (the last id of the page before), until a page
        brings nothing new: a page may hold fewer items than asked for and still not be the last (Letta applies a
        filter by message type after the limit)."""
        after: str | None = None
        seen: set[tuple] = set()
        while True:
            query = {**params, "limit": page, **({"after": after} if after else {})}
            batch = _check(self.http.get(path, params=query), what)
            # A memgpt step's reasoning and its reply share an id: an item is its id and its type.
            fresh = [item for item in batch if (item.get("id"), item.get("message_type")) not in seen]
            yield from fresh
            if not fresh:
                return
            seen.update((item.get("id"), item.get("message_type")) for item in batch)
            after = batch[-1]["id"]

    def conversation_ids(self) -> list[str]:
        """The agent's conversations, the most recently active first (those with no message yet, newest first,
        after them)."""
        listed = list(self._pages("/v1/conversations/", {"agent_id": self.agent_id, "order": "desc",
                                                         "order_by": "last_message_at"}, CONVERSATION_PAGE,
                                  f"listing {self.account.label}'s conversations"))
        return [c["id"] for c in listed]

    def _messages(self, conversation_id: str) -> list[dict]:
        """Every message of the conversation, oldest first, of every type."""
        return list(self._pages(f"/v1/conversations/{conversation_id}/messages", {"order": "asc"}, PAGE,
                                f"reading {self.account.label}'s conversation {conversation_id}"))

    def turns(self, conversation_id: str) -> list[Turn]:
        return [Turn("user" if m["message_type"] == "user_message" else "assistant", _content(m))
                for m in self._messages(conversation_id) if _is_turn(m)]

    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        resp = self.http.get(f"/v1/conversations/{conversation_id}")
        return ApiAnswer(resp.status_code, resp.text)

    def memories(self) -> list[Memory]:
        rows = self._pages(f"/v1/agents/{self.agent_id}/archival-memory", {"ascending": "true"}, PAGE,
                           f"listing {self.account.label}'s archival memory")
        return [Memory(p["id"], p.get("text") or "") for p in rows]

    def remember(self, texts: list[str]) -> None:
        for text in texts:
            _check(self.http.post(f"/v1/agents/{self.agent_id}/archival-memory", json={"text": text}),
                   f"inserting into {self.account.label}'s archival memory")

    def search(self, query: str, k: int) -> list[Hit]:
        data = _check(self.http.get(f"/v1/agents/{self.agent_id}/archival-memory/search",
                                    params={"query": query, "top_k": k}),
                      f"searching {self.account.label}'s archival memory")
        return [Hit(r["id"], 0.0, r.get("content") or "") for r in data.get("results", [])]  # Letta gives no score

    def seed_conversation(self, sentence: str) -> str:
        """A conversation in which the user told the sentence, through the agent loop: what Letta stores of it is
        what the agent stored."""
        conversation = self.start_conversation()
        self.send(conversation, sentence)
        return conversation

    # -- chatting ------------------------------------------------------------------------------------------------
    def start_conversation(self) -> str:
        created = _check(self.http.post("/v1/conversations/", params={"agent_id": self.agent_id}, json={}),
                         f"starting a conversation for {self.account.label}")
        return str(created["id"])

    def send(self, conversation_id: str, text: str) -> Reply:
        body = {"messages": [{"role": "user", "content": text}], "streaming": False, "max_steps": MAX_STEPS}
        data = _check(self.http.post(f"/v1/conversations/{conversation_id}/messages", json=body,
                                     timeout=SEND_TIMEOUT), f"{self.account.label} sending a message")
        messages = data.get("messages") or []
        reply = "\n".join(_content(m) for m in messages if m.get("message_type") == "assistant_message")
        recalled = [text for m in messages if m.get("message_type") == "tool_return_message"
                    and m.get("name") == SEARCH_TOOL and m.get("status") == "success"
                    for text in found_memories(str(m.get("tool_return") or ""))]
        return Reply(reply, tuple(recalled))

    def credentials(self) -> dict:
        return {"user_id": self.account.id}

    # -- what users take back: Letta's own routes for an agent's archival memory and its conversations ---------------
    def delete_memory(self, memory_id: str) -> None:
        """`DELETE /v1/agents/{agent}/archival-memory/{passage}`: Letta deletes the passage's row, its vector with it
        (a column of the row) and its tags."""
        _done(self.http.delete(f"/v1/agents/{self.agent_id}/archival-memory/{memory_id}"),
               f"deleting {self.account.label}'s archival memory {memory_id}")

    def clear_memories(self) -> None:
        """Letta has no call that deletes all of an agent's passages (only `DELETE /v1/archives/{id}`, which deletes
        the archive itself, detaching it from the agent): every passage listed, deleted one by one, as a client
        clears them."""
        for memory in self.memories():
            self.delete_memory(memory.id)

    def delete_conversation(self, conversation_id: str) -> None:
        """`DELETE /v1/conversations/{id}`: Letta marks the conversation and its messages deleted (it keeps their rows)
        and deletes the conversation's own memory blocks; the agent's archival memory is not touched."""
        _done(self.http.delete(f"/v1/conversations/{conversation_id}"),
               f"deleting {self.account.label}'s conversation {conversation_id}")

    # -- another user's data -------------------------------------------------------------------------------------
    def reads_of(self, other: Account, conversation_ids: list[str], memory_ids: list[str]) -> dict[str, ApiAnswer]:
        """Every read of Letta's API that could reach `other`'s data: by the ids their own API shows them (agent,
        archive, memory blocks, conversations, messages, runs, steps) and by every listing and search. Letta has no
        read of one memory by its id (`memory_ids`): memories are reached through the agent, archive and searches."""
        theirs = self._peer(other)
        agent = theirs.agent_id
        own = theirs.http
        archives = [a["id"] for a in _check(own.get("/v1/archives/", params={"agent_id": agent}),
                                            f"listing {other.label}'s archives")]
        blocks = [b["id"] for b in _check(own.get(f"/v1/agents/{agent}/core-memory/blocks"),
                                          f"listing {other.label}'s memory blocks")]
        # Runs and steps by the ids on the other's messages (Letta's step listing answers 400 to a filter by agent).
        everything = [m for cid in conversation_ids for m in theirs._messages(cid)]
        messages = sorted({str(m["id"]) for m in everything})
        runs = sorted({str(m["run_id"]) for m in everything if m.get("run_id")})
        steps = sorted({str(m["step_id"]) for m in everything if m.get("step_id")})

        gets: dict[str, tuple[str, dict[str, Any]]] = {
            "agents listing": ("/v1/agents/", {"limit": LISTING}),
            f"agent {agent}": (f"/v1/agents/{agent}", {}),
            f"agent {agent} export": (f"/v1/agents/{agent}/export", {}),
            f"agent {agent} context": (f"/v1/agents/{agent}/context", {}),
            f"agent {agent} core memory": (f"/v1/agents/{agent}/core-memory", {}),
            f"agent {agent} memory blocks": (f"/v1/agents/{agent}/core-memory/blocks", {}),
            f"agent {agent} archival memory": (f"/v1/agents/{agent}/archival-memory", {"limit": LISTING}),
            f"agent {agent} archival search": (f"/v1/agents/{agent}/archival-memory/search",
                                               {"query": BROAD_QUERY, "top_k": LISTING}),
            f"agent {agent} messages": (f"/v1/agents/{agent}/messages", {"limit": LISTING}),
            f"agent {agent} default conversation": ("/v1/conversations/default/messages",
                                                    {"agent_id": agent, "limit": LISTING}),
            "conversations listing": ("/v1/conversations/", {"limit": LISTING}),
            f"conversations of agent {agent}": ("/v1/conversations/", {"agent_id": agent, "limit": LISTING}),
            "messages listing": ("/v1/messages/", {"limit": LISTING}),
            "archives listing": ("/v1/archives/", {"limit": LISTING}),
            "blocks listing": ("/v1/blocks/", {"limit": LISTING}),
            "runs listing": ("/v1/runs/", {"limit": LISTING}),
            "steps listing": ("/v1/steps/", {"limit": LISTING}),
        }
        for cid in conversation_ids:
            gets[f"conversation {cid}"] = (f"/v1/conversations/{cid}", {})
            gets[f"conversation {cid} messages"] = (f"/v1/conversations/{cid}/messages", {"limit": LISTING})
            gets[f"messages listing of conversation {cid}"] = ("/v1/messages/", {"conversation_id": cid,
                                                                                 "limit": LISTING})
        for ident in archives:
            gets[f"archive {ident}"] = (f"/v1/archives/{ident}", {})
            gets[f"agents of archive {ident}"] = (f"/v1/archives/{ident}/agents", {})
        for ident in blocks:
            gets[f"block {ident}"] = (f"/v1/blocks/{ident}", {})
        for ident in runs:
            gets[f"run {ident} messages"] = (f"/v1/runs/{ident}/messages", {"limit": LISTING})
        for ident in steps:
            gets[f"step {ident} messages"] = (f"/v1/steps/{ident}/messages", {"limit": LISTING})
        for ident in messages:
            gets[f"message {ident}"] = (f"/v1/messages/{ident}", {})
        with ThreadPoolExecutor(READERS) as pool:  # hundreds of reads by id; Letta serves them side by side
            answers = dict(zip(gets, pool.map(lambda read: self._answer(self.http.get(read[0], params=read[1])),
                                              gets.values()), strict=True))

        searches: dict[str, dict[str, Any]] = {
            f"passages search of agent {agent}": {"query": BROAD_QUERY, "agent_id": agent, "limit": 100},
            "passages search": {"query": BROAD_QUERY, "limit": 100},
            "passages listing": {"limit": 100},
            **{f"passages search of archive {a}": {"query": BROAD_QUERY, "archive_id": a, "limit": 100}
               for a in archives},
        }
        for label, body in searches.items():
            answers[label] = self._answer(self.http.post("/v1/passages/search", json=body))
        return answers

    @staticmethod
    def _answer(resp: httpx.Response) -> ApiAnswer:
        return ApiAnswer(resp.status_code, resp.text)

    def close(self) -> None:
        self.http.close()
