"""A user's session of an app through its API, whatever the app: the reads and writes the steps make as that user."""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.drivers.base.capabilities import DriverError
from harness.drivers.base.records import (
    Account,
    ApiAnswer,
    Memory,
    Reply,
)
from harness.vocabulary.recall import Hit
from harness.vocabulary.turn import Turn


class UserSession(ABC):
    """One signed-in user's view of the app's API."""

    account: Account

    @abstractmethod
    def conversation_ids(self) -> list[str]:
        """The user's conversations, newest first."""

    def conversation_titles(self) -> dict[str, str]:
        """Each of the user's conversations' title as the API lists it, by id (for a target that declares its
        titles: [limits] title_length)."""
        raise NotImplementedError(f"the {type(self).__name__} reads no conversation titles; remove [limits] "
                                  "title_length from the target or teach its driver to read them")

    def conversation_previews(self) -> dict[str, str]:
        """Each of the user's conversations' preview (its last message, cut) as the API lists it, by id (for a
        target that declares its previews: [limits] preview_length)."""
        raise NotImplementedError(f"the {type(self).__name__} reads no conversation previews; remove [limits] "
                                  "preview_length from the target or teach its driver to read them")

    @abstractmethod
    def turns(self, conversation_id: str) -> list[Turn]:
        """Every turn of one of the user's conversations, oldest first, text exactly as stored."""

    @abstractmethod
    def ask_for_conversation(self, conversation_id: str) -> ApiAnswer:
        """Ask the API for a conversation by id (maybe another user's); status and body as answered."""

    @abstractmethod
    def memories(self) -> list[Memory]:
        """The user's long-term memories, oldest first."""

    @abstractmethod
    def remember(self, texts: list[str]) -> None:
        """Store memories directly (seeding), as the app's own memory API does."""

    @abstractmethod
    def search(self, query: str, k: int) -> list[Hit]:
        """The app's semantic memory search for this user, best first."""

    @abstractmethod
    def seed_conversation(self, sentence: str) -> str:
        """A conversation in which the user told the assistant `sentence`, with what the app remembers of it
        stored; returns its id. For data a scenario needs but does not itself test."""

    # -- chatting without a page (CHAT_API) ------------------------------------------------------------------------
    def start_conversation(self) -> str:
        """A new, empty conversation; its id."""
        raise DriverError(f"{type(self).__name__} cannot start a conversation through the API")

    def send(self, conversation_id: str, text: str) -> Reply:
        """One turn in a conversation, as the user's chat client sends it; the assistant's reply."""
        raise DriverError(f"{type(self).__name__} cannot chat through the API")

    def credentials(self) -> dict:
        """What this session presents to the app (a cookie, a token, an identity header), in the shape the driver's
        `accepts` reads: a copied one is what a thief would hold."""
        raise DriverError(f"{type(self).__name__} cannot show what it presents to the app")

    # -- what users take back (the capabilities above) ------------------------------------------------------------
    def delete_memory(self, memory_id: str) -> None:
        """Delete one of the user's memories, as the app's memory settings do."""
        raise DriverError(f"{type(self).__name__} cannot delete a memory")

    def edit_memory(self, memory_id: str, text: str) -> None:
        """Replace one of the user's memories' text, as the app's memory settings do."""
        raise DriverError(f"{type(self).__name__} cannot edit a memory")

    def clear_memories(self) -> None:
        """Delete every memory of the user's, as the app's "clear all" does."""
        raise DriverError(f"{type(self).__name__} cannot clear a user's memories")

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete one of the user's conversations, as the app's conversation list does."""
        raise DriverError(f"{type(self).__name__} cannot delete a conversation")

    def set_memory(self, enabled: bool) -> None:
        """Turn the user's memory off or on, as the app's settings do."""
        raise DriverError(f"{type(self).__name__} cannot turn memory off or on")

    def memory_setting(self) -> bool | None:
        """Whether the user's memory is on, as the app's API reads it back; None where the driver reads no such
        setting (the generated sessions then say that they did not check it)."""
        return None

    def request(self, method: str, path: str, *, json: object = None,
                headers: dict[str, str] | None = None) -> ApiAnswer:
        """One call of the app's API as this user (what the session presents, plus `headers`), answered as is: for
        the hostile users' writes (harness.users.hostile), which name paths and bodies from the target's [api] and
        [write_bodies]."""
        raise DriverError(f"{type(self).__name__} cannot send a call of its own to the app's API")

    def reads_of(self, other: Account, conversation_ids: list[str], memory_ids: list[str]) -> dict[str, ApiAnswer]:
        """Every read this user's API offers of another user's data (that user's conversations and memories, by id
        and by listing), by what was asked: the isolation checks look for the other's texts in every answer."""
        return {f"conversation {cid}": self.ask_for_conversation(cid) for cid in conversation_ids}

    def close(self) -> None:  # noqa: B027 - most sessions hold nothing to close
        pass
