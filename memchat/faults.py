"""Switchable faults: each one a memory regression that real teams have shipped.

With no fault on, the app is correct. Every fault shows deterministically, so a kill matrix built on it never flakes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    bug_class: str
    effect: str


CATALOG: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault("unload-write-lost", "front end: pending write flushed on beforeunload, which never fires on close",
              "the memory queued after the last reply is lost when the page or browser closes"),
        Fault("write-held-back", "front end: memory writes held back for more turns, then sent on pagehide",
              "the memory of the last reply is lost when the tab closes while the page is busy"),
        Fault("session-not-persistent", "session cookie without Max-Age",
              "the login dies with the browser"),
        Fault("recall-ignores-user", "memory search not scoped to the user",
              "another user's memories are recalled"),
        Fault("history-idor", "conversation served by id without an owner check (IDOR)",
              "another user's conversation opens by its URL or API"),
        Fault("write-race", "front end: the write queue keeps only the latest turn",
              "of two quick turns only the last is written to memory"),
        Fault("context-dropped", "assistant prompt built without the conversation's earlier turns (memory writes "
              "held back to the conversation's end, as by a late writer)",
              "facts told earlier in the same conversation are not answered until their memory lands"),
        Fault("migration-drops-last-batch", "off-by-one in the migration's batch loop",
              "the final partial batch is never copied"),
        Fault("migration-null-embedding", "batch embedding call drops its last result; the row is written anyway",
              "the last row of every migrated batch is stored without an embedding"),
        Fault("migration-created-at-reset", "the migration reads the creation time under a renamed key and stamps "
              "the time it ran", "every migrated memory looks told today: its age, ordering and retention are lost"),
        Fault("migration-local-times-as-utc", "the migration labels the legacy wall clock UTC "
              "(fromisoformat(t).replace(tzinfo=UTC)): the store's declared zone is ignored and offsets are dropped",
              "memories told in the legacy app outside UTC move by hours (across midnight, to another day): their "
              "age, order and expiry are off"),
        Fault("migration-drops-conversation", "the migration's row mapping leaves out the conversation column",
              "migrated memories no longer belong to the conversation they were told in"),
        Fault("ivfflat-before-load", "ivfflat index built on the empty table, default probes = 1",
              "owners searched through the index lose most of their memories"),
        Fault("stale-embeddings", "re-embedding skipped after an embedding-model change",
              "memories written under the old model are never recalled again"),
        Fault("threshold-too-strict", "similarity threshold tuned on exact repeats (0.9)",
              "memories are recalled only for near-verbatim questions"),
        Fault("ttl-too-short", "retention in days applied as hours",
              "memories expire after about two weeks instead of a year"),
        Fault("long-conversation-forgets", "prompt keeps the last 20 messages and recall skips the current "
              "conversation", "a fact told 11 or more exchanges earlier in the same conversation is forgotten, or "
              "answered with an older value from another conversation"),
        Fault("sign-out-write-lost", "front end: pending memory writes left to the unload beacon on sign-out",
              "a fact told right before signing out is never stored (the beacon leaves after the session ended)"),
        Fault("title-splits-emoji", "front end: the conversation title cut at 80 UTF-16 code units",
              "a first message with an emoji across its 80th character cannot be sent (half an emoji is refused)"),
        Fault("reopened-conversation-wins", "a fact stated in the open conversation beats any memory, however new",
              "in an older conversation opened again, a fact corrected elsewhere since is answered with its old "
              "value"),
        Fault("common-word-key-forgotten", "the lookup of an asked fact's newest memory is skipped when the question "
              "has no search vector", "a fact whose name is a common word (\"my will\") is never recalled in a later "
              "conversation"),
        Fault("many-facts-lost", "front end: a turn's memory writes sent in one request, refused above 50 items, "
              "the refusal ignored", "a message that states more than 50 facts stores none of them"),
        Fault("ime-enter-sends", "front end: Enter sends the message even while an input method composes",
              "confirming a character in a Chinese or Japanese input method sends the half-typed message"),
        Fault("soft-delete-still-recalled", "soft delete: a deleted memory is only marked (its tombstone) and hidden "
              "from the list, while search and recall still read its row and vector (Open WebUI #24431)",
              "a memory deleted on the Memories page is gone from the list but still answered and found by search"),
        Fault("edit-keeps-old-vector", "an edit updates the memory's text but not its embedding or fact key",
              "an edited memory is not found by its new text and still found, and recalled, by its old one"),
        Fault("clear-all-users", "\"clear all\" deletes without the owner's filter (mem0 #3746: delete_all resets the "
              "whole store)", "clearing one's memories deletes every user's memories"),
        Fault("conversation-delete-keeps-messages", "soft-deleted conversation: the list leaves it out, the reads by "
              "id do not check the mark", "a deleted conversation leaves the list, but its page and its messages "
              "are still served by its id"),
        Fault("memory-off-still-recalls", "the memory switch gates the writes only, not recall",
              "with memory off, nothing new is remembered but old memories are still recalled and answered"),
        Fault("memory-off-still-writes", "the memory switch gates recall only; the turn's facts are still extracted "
              "and stored", "with memory off, what the user tells is still remembered and answered after memory "
              "is turned on again"),
        Fault("deleted-memory-returns", "front end: optimistic delete whose request names the memory by a wrong key, "
              "its failure ignored (LobeHub #15576)", "a memory deleted on the Memories page disappears, and is "
              "back after a reload (and still answered)"),
        Fault("memory-setting-not-saved", "front end: the memory switch changes the page only; no request is sent "
              "(LobeHub #11101)", "memory turned off on the Memories page is on again after a reload, and what "
              "the user tells meanwhile is remembered"),
        Fault("migration-resurrects-deleted", "the migration checks presence in the live table only, not the "
              "owners' deletions", "a memory deleted after a migration is back after the migration runs again"),
        Fault("conversation-list-by-creation", "the conversation list ordered by the creation column (an index "
              "added on created_at, the query changed to use it)", "a conversation the user just talked in stays "
              "below newer ones instead of moving to the top"),
        Fault("title-follows-latest-message", "the title's \"set once\" guard dropped from the message insert",
              "each conversation in the list is titled with the user's latest message instead of their first"),
        Fault("preview-shows-own-message", "the conversation list's preview query filtered to the user's own "
              "messages (\"what you last said\")", "each conversation in the list previews the user's last message "
              "instead of the conversation's last one, the assistant's reply"),
        Fault("preview-set-on-load-only", "front end: the list entry's preview is rendered with the page and never "
              "updated when a reply comes", "the conversation the user is talking in previews an older message, or "
              "nothing in a new conversation, until the page is loaded again"),
        Fault("writes-stall-after-error", "front end: a failed send pauses the page's memory writes \"until the "
              "connection is back\", and nothing ever resumes them", "after one message the app could not answer, "
              "nothing the user tells in that page is remembered, and nobody says so"),
        Fault("failed-send-resent", "front end: a message whose request failed on the network is kept in an outbox "
              "and sent again before the next one, though the server may have stored it",
              "after a reply lost to a dropped connection, the message is stored twice in the conversation"),
        Fault("memory-owner-from-body", "object/property-level authorization (OWASP API1/API3): a memory write or "
              "edit takes its owner from the body's user_id when one is given, instead of the session",
              "any signed-in user can write into, or rewrite, another user's memories by naming their id"),
        Fault("sign-in-matches-like", "sign-in looks the address up with SQL ILIKE and takes the oldest match, so "
              "'_' and '%' in a typed address are wildcards", "a user whose address holds '_' or '%' is refused with "
              "her own password (or let into another's account) when an older address matches the pattern"),
        Fault("lockout-never-expires", "sign-in throttling counts the wrong passwords ever typed, not those within "
              "the lockout window", "a user locked out by wrong passwords stays locked out after the declared "
              "lockout has passed"),
        Fault("lockout-matches-like", "sign-in throttling counts the wrong passwords of every address that the "
              "signing-in one matches as an ILIKE pattern ('_' any character)", "wrong passwords typed at one "
              "user's address lock out another whose address, read as a pattern, matches it (ana_1@ by ana11@'s)"),
        Fault("message-kept-until-answered", "front end: the message stays in its box until its answer comes (so "
              "that a failed send is not lost), and Send stays enabled meanwhile", "a second click of Send while a "
              "slow answer is on its way sends the message again: the turn is stored and answered twice"),
        Fault("new-conversation-at-once", "front end: New conversation moves to the new page at once, without "
              "waiting for the turn on its way or the memory writes it brings", "a message sent just before "
              "starting a new conversation, while its answer is slow, is never stored: not in the conversation, not "
              "in memory"),
        Fault("offline-send-kept-silently", "front end: a message sent while the browser is offline is kept to be "
              "sent once back online, nothing is said, and the page listens for no 'online' event", "a message "
              "typed on a flaky connection shows as sent but never reaches the app, and nobody says so"),
        Fault("busy-store-write-dropped", "a memory write gives up after a second of waiting on a lock (a "
              "lock_timeout, so that no request hangs behind maintenance) and is answered as stored", "a fact told "
              "while the store is busy (an index build holding the memories) is never remembered, and nothing says "
              "so"),
    )
}


class UnknownFault(ValueError):
    pass


def parse_faults(spec: str | None) -> frozenset[str]:
    """`a,b` -> {"a", "b"}; an unknown name raises with the list of known ones."""
    names = {n.strip() for n in (spec or "").split(",") if n.strip()}
    unknown = sorted(names - CATALOG.keys())
    if unknown:
        raise UnknownFault(f"unknown fault {', '.join(map(repr, unknown))}; known faults: {', '.join(CATALOG)}")
    return frozenset(names)


def markdown_table() -> str:
    rows = ["| fault | real bug class | what the user sees |", "|---|---|---|"]
    rows += [f"| `{f.name}` | {f.bug_class} | {f.effect} |" for f in CATALOG.values()]
    return "\n".join(rows)
