"""What a step hands on to later steps of other areas: small frozen records, passed by pytest-bdd's
`target_fixture` (a step returns the new record; a later step asks for it by name). An area's own records stay in
its step module.

`talk` is what every user of the scenario said and was answered, and who acted last (the "her" and "the assistant"
of the Gherkin): each step that talks, tells or starts a conversation returns it anew.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import pytest

from harness.drivers.base import Account
from harness.users.actor import Exchange
from harness.vocabulary.facts import Fact
from harness.vocabulary.order import Span
from harness.vocabulary.turn import Turn


@dataclass(frozen=True)
class Said:
    """What one user said in the scenario, and what they were answered."""

    told: tuple[Fact, ...] = ()  # every fact they told (in a turn, or stored directly), in order
    turns: tuple[Turn, ...] = ()  # the turns of the conversation they have open, as said and answered
    last: Exchange | None = None  # their last turn
    conversations: tuple[str, ...] = ()  # the conversations seeded for them, oldest first
    noted: str = ""  # the conversation they had open when a step noted it (before closing the browser, ...)
    # When each memory stored directly was made, as a span of the suite's clock (kept only where the app's timestamps
    # are coarse: [limits] clock_resolution_s), to judge a list's order to that resolution.
    made: tuple[tuple[str, Span], ...] = ()


@dataclass(frozen=True)
class Talk:
    speaker: str = ""  # who acted last
    by: MappingProxyType[str, Said] = field(default_factory=lambda: MappingProxyType({}))

    def of(self, name: str) -> Said:
        return self.by.get(name, Said())

    @property
    def last(self) -> Exchange:
        """The last turn of the user who acted last."""
        last = self.of(self.speaker).last
        assert last is not None, f"{self.speaker or 'nobody'} has said nothing yet"
        return last

    def _with(self, name: str, **changes: Any) -> Talk:
        return Talk(name, MappingProxyType({**self.by, name: replace(self.of(name), **changes)}))

    def after(self, exchange: Exchange, *told: Fact) -> Talk:
        """`exchange` said in the user's open conversation; `told`: the facts it told."""
        said = self.of(exchange.name)
        return self._with(exchange.name, turns=said.turns + exchange.turns, last=exchange, told=said.told + told)

    def stored(self, name: str, *told: Fact, made: tuple[tuple[str, Span], ...] = ()) -> Talk:
        """Facts put into the user's memory directly (through the app's API, not told in a turn); `made`: when."""
        said = self.of(name)
        return self._with(name, told=said.told + told, made=said.made + made)

    def new_conversation(self, name: str) -> Talk:
        return self._with(name, turns=())

    def noting(self, name: str, conversation_id: str) -> Talk:
        return self._with(name, noted=conversation_id)

    def seeded(self, name: str, conversation_id: str, fact: Fact) -> Talk:
        """A conversation in which the user told `fact`, seeded through the app's API."""
        said = self.of(name)
        return self._with(name, conversations=said.conversations + (conversation_id,), told=said.told + (fact,))

    def new_account(self, name: str) -> Talk:
        """The user starts over with a new account: nothing said yet."""
        return Talk(name, MappingProxyType({**self.by, name: Said()}))


@pytest.fixture
def talk() -> Talk:
    """Nothing said yet; each step that talks hands on a new one (target_fixture="talk")."""
    return Talk()


@dataclass(frozen=True)
class LeftSession:
    """What a user left behind when they signed out or their account was deleted: the session their browser held
    (what a copied cookie or token would be), and what the account held then."""

    name: str
    account: Account
    held: dict  # the browser's storage state
    why: str  # "Ana signed out", ...
    conversation_ids: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Listing:
    """A user's conversation list as the page showed it."""

    name: str
    ids: list[str]


@dataclass(frozen=True)
class TakenBack:
    """What a user took back, as the app held it just before: memories (ids and texts) and conversations (ids and
    turns), for the checks of what must be gone."""

    name: str = ""
    memory_ids: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    conversation_ids: tuple[str, ...] = ()
    turns: tuple[Turn, ...] = ()
    edits: tuple[tuple[str, str], ...] = ()  # each memory edited: (its old text, its new text)

    def plus(self, name: str, memory_ids: tuple[str, ...] = (), texts: tuple[str, ...] = (),
             conversation_ids: tuple[str, ...] = (), turns: tuple[Turn, ...] = (),
             edits: tuple[tuple[str, str], ...] = ()) -> TakenBack:
        return TakenBack(name, self.memory_ids + memory_ids, self.texts + texts,
                         self.conversation_ids + conversation_ids, self.turns + turns, self.edits + edits)

    @property
    def edited_to(self) -> tuple[str, ...]:
        return tuple(new for _, new in self.edits)


@pytest.fixture
def taken_back() -> TakenBack:
    """Nothing taken back yet; each step that takes something back hands on a new one (target_fixture)."""
    return TakenBack()
