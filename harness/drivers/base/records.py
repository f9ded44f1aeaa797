"""The small records a driver returns, whatever the app: accounts, memories, replies, answers of its API, what its
store holds of a memory, the indexes it promises and the starts it refuses."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Account:
    id: str  # the app's own id for the user
    email: str
    password: str  # empty for an app whose users have none (an identity given by a header)
    name: str  # the display name the app was given

    @property
    def label(self) -> str:
        return f"{self.name} <{self.email}>"


@dataclass(frozen=True)
class Memory:
    id: str
    text: str


@dataclass(frozen=True)
class NewUser:
    """A user to import in bulk (the owners of a replayed history); without a password the account cannot sign in."""

    id: str
    email: str
    name: str
    password: str | None = None


@dataclass(frozen=True)
class OwnTextQuery:
    """Search `owner_id`'s memories with memory `memory_id`'s own text: its vector (None: the text has none) for a
    store queried directly, the text for an app searched through its API."""

    memory_id: str
    owner_id: str
    vector: bytes | None  # little-endian float32
    text: str = ""


# How close below a memory's own score another memory's score must come for a driver to report it: wider than any
# tie a check counts (1e-6), so that only memories that cannot matter are left out.
NEAR_TIE = 1e-5


@dataclass(frozen=True)
class OwnTextResult:
    """What the store holds of one memory, and how its similarity query scores the memory's own text against it and
    against the owner's other memories."""

    memory_id: str
    owner_id: str | None  # None: no such row
    text: str | None
    has_vector: bool
    own_score: float | None  # None when the query cannot reach the row (no vector, another model's, expired)
    # The best score of another memory of the owner where it comes within NEAR_TIE of the memory's own score or
    # above it (a tie, or a memory that outranks it); a driver may give it further down too. None: none does.
    best_other_score: float | None
    best_other_id: str | None = None  # which one, when it scores above the memory itself
    fields: dict[str, str | None] = field(default_factory=dict)  # those of MEMORY_FIELDS the app keeps (times ISO)


# What a replay compares of each memory beyond its owner, text and vector, where the app keeps it (kept_fields).
MEMORY_FIELDS = ("conversation", "created_at", "expires_at")


@dataclass(frozen=True)
class PromisedIndex:
    """A vector index an app promises: its kind ("hnsw" or "ivfflat"), the build options it promises (e.g. an
    ivfflat index's `lists`), and the condition of a partial one, as PostgreSQL prints it ("" for every row)."""

    method: str
    options: tuple[tuple[str, str], ...] = ()
    predicate: str = ""


@dataclass(frozen=True)
class Reply:
    """The assistant's answer to one message sent through the app's API."""

    text: str
    recalled: tuple[str, ...] = ()  # the texts of the memories the app says it used for it (empty: it does not say)
    recalled_ids: tuple[str, ...] = ()  # their ids, where the app gives them


@dataclass(frozen=True)
class ApiAnswer:
    """What the API answered a user asking for a conversation: status and body, to check that nothing leaked."""

    status: int
    body: str

    @property
    def refused(self) -> bool:
        return self.status in (401, 403, 404)


@dataclass(frozen=True)
class EdgeAnswer:
    """One request at an edge of the app's API (a body as large as it accepts, one byte larger, a malformed field),
    the status its documentation promises for it, and what it answered."""

    what: str  # the request, in a line: "a memory write of exactly 65536 bytes"
    promised: int
    status: int
    body: str
    kept: str = ""  # the text of the memory an accepted request wrote for the user ("" for none)
    says: str = ""  # words the documentation promises the answer holds (a refusal naming what is wrong), if any


@dataclass(frozen=True)
class RefusedStart:
    """One start of the app with a mistake its operators are warned of, what its refusal must name for them to fix it,
    and how the start ended: its exit status and what it said on its error stream."""

    what: str  # the mistake, in a line: "a port another program listens on"
    named: str
    returncode: int
    said: tuple[str, ...]  # its error stream's lines that are not blank


@dataclass(frozen=True)
class StoppedApp:
    """How the app ended when its operator stopped it (`how`: "with SIGTERM", "with Ctrl-C"): its exit status and the
    one its documentation promises for that stop, what it said on its error stream, and what it had started that was
    still running once it had ended."""

    how: str
    returncode: int
    promised_returncode: int
    said: tuple[str, ...]  # its error stream's lines that are not blank
    left_running: tuple[str, ...]  # each process it started that outlived it, as "pid command line"

    def wrong(self) -> list[str]:
        """What of the stop its operators are not told to expect: another exit status, words on its error stream (a
        traceback), anything it started still running."""
        return [*([f"ended with exit status {self.returncode}, not {self.promised_returncode}"]
                  if self.returncode != self.promised_returncode else []),
                *([f"said {list(self.said[-3:])}"] if self.said else []),
                *([f"left running {list(self.left_running)}"] if self.left_running else [])]
