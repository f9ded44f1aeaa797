"""What the steps need from a chat app besides the browser, whatever the app: the driver protocol.

A driver knows one kind of app (its API shapes, how it signs a browser in, how it starts on fresh data, what it can
and cannot do). Steps ask the driver and never the app's API directly, so one set of features runs against every app.
Everything a driver returns is normalised to the small records below.

Optional capabilities are declared by the driver (`capabilities`). A scenario that needs one the driver lacks is
skipped with one line naming it (`AppHandle.require`), never passed without testing anything.
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from harness.app.app_launcher import ROOT, RunningApp, attach_app, start_process
from harness.app.app_tools import ToolRun, embed_texts_f32
from harness.app.legacy_store import MigrationCounts
from harness.app.target import Target, fill
from harness.services.databases import IndexScans, VectorIndex
from harness.vocabulary.recall import Hit
from harness.vocabulary.turn import Turn
from model_server.client import ModelServer


def faults_of(settings: dict[str, str]) -> list[str]:
    """The faults an app's settings switch on (the kill matrix's `faults`, comma-separated)."""
    return [name for name in settings.get("faults", "").split(",") if name]


def catalogue_of(misconfigurations: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    """A driver's misconfigurations by name as its `fault_catalogue`: name, bug_class, what the user sees."""
    return [{"name": name, "bug_class": m["bug_class"], "user_sees": m["user_sees"]}
            for name, m in misconfigurations.items()]


def start_in_folder(target: Target, *, port: int, env: dict[str, str], log_path: Path, cwd: Path,
                    extra: Sequence[str] = (), healthy: Callable[[dict], bool] = lambda _: True,
                    default_timeout: float = 180.0, **values: str) -> tuple[Any, dict]:
    """The target's start command ({port} and `values` filled in, then `extra`) started in the app's own folder,
    a relative program path taken from the project's root; the process and its health once it answers."""
    command = fill(target.start_command, port=str(port), **values)
    if "/" in command[0] and not Path(command[0]).is_absolute():
        command[0] = str(ROOT / command[0])
    return start_process(target.name, [*command, *extra], env=env, log_path=log_path,
                         health_url=f"http://127.0.0.1:{port}{target.health_path}", cwd=cwd,
                         timeout=float(target.app.get("start_timeout", default_timeout)), healthy=healthy,
                         warm=target.warm_start)


def started_on_model_server(port: int, health: dict, process: Any, model: ModelServer, *, pg_dsn: str,
                            redis_url: str, settings: dict[str, str], log_path: Path, data_dir: Path,
                            **described: str) -> RunningApp:
    """An app the suite started in its own folder against its own model server (the app's companion, stopped with
    it); `described`: what its health is told besides (its name, its embedder)."""
    return RunningApp(f"http://127.0.0.1:{port}", {**health, **described}, None, pg_dsn, redis_url, dict(settings),
                      True, log_path, process, data_dir=data_dir, companions=model.processes,
                      model_url=model.base_url)


def attached_as(target: Target, base_url: str, admin_token: str | None, **described: str) -> RunningApp:
    """A running app of the target's, checked to answer, its health told what the driver knows of it."""
    app = attach_app(target.name, base_url, target.health_path, admin_token)
    app.health = {**app.health, **described}
    return app


class Capability(StrEnum):
    """Optional things an app may offer the suite; the value is what a skip line names."""

    REQUESTED_USER_IDS = "users created with ids the test chooses"
    MOVABLE_CLOCK = "a clock the test can move"
    MEMORY_SEARCH = "a search of a user's memories that users can run"
    APP_SETTINGS = "restarting the app with other settings on fresh data"
    EMBEDDING_MODEL_CHANGE = "an embedding-model change with the app's upgrade procedure"
    MIGRATION_TOOLS = "the legacy-store loading and migration tools"
    DATABASE_ACCESS = "direct access to the app's databases"
    SERVER_SIGN_OUT = "server-side sign-out"
    PASSWORD_SIGN_IN = "a sign-in with a password through the app's API"
    RESTART = "restarting the app on its own data"
    CHAT_API = "chatting through the app's API"
    SEARCH_SCORES = "similarity scores in the app's memory search"
    HISTORY_IMPORT = "loading a history of memories into the app's store"
    APP_UPGRADE = "an upgrade from an older release of the app on the same data"
    # What users take back (UserSession's delete_memory, edit_memory, clear_memories, delete_conversation,
    # set_memory; a browser actor does them on the app's page where its target has the locators).
    MEMORY_DELETE = "deleting one of a user's memories"
    MEMORY_EDIT = "editing one of a user's memories"
    MEMORY_CLEAR = "clearing all of a user's memories"
    CONVERSATION_DELETE = "deleting a conversation"
    MEMORY_SWITCH = "turning a user's memory off and on"
    # memory_remains alone, for a driver that reads no more of the app's store than what users took back (without
    # DATABASE_ACCESS, which promises every store read of the replay and of deleted accounts)
    MEMORY_REMAINS = "reading what the app's store keeps of a deleted memory"
    # conversation_remains: what the store keeps of a deleted conversation (its row, its messages)
    CONVERSATION_REMAINS = "reading what the app's store keeps of a deleted conversation"
    # remains_of alone, likewise: what the store keeps of a deleted account
    ACCOUNT_REMAINS = "reading what the app's store keeps of a deleted account"
    # promised_vector_indexes: the vector indexes the app builds for its settings and the volume of its store, as its
    # documentation says
    INDEX_PROMISES = "the vector indexes it promises for its settings and the volume of its store"
    # edge_answers: the answers the app's API documents at the edges of its size limits and to malformed requests
    API_EDGES = "the answers its API documents at the edges of its size limits and to malformed requests"
    # add_user_by_tool, delete_user_by_tool: an operator's accounts, on the app's command line
    ACCOUNT_TOOLS = "adding and deleting accounts with the app's command line"
    # refused_starts: the app started with each mistake its operators are warned of
    START_REFUSALS = "refusing in one line a start its operators get wrong"


# Given by the suite to a driver: stop `app`, run `between` (a tool on its stopped data), start it again on the same
# data with `settings`; the suite keeps track of the new instance.
RestartApp = Callable[[RunningApp, dict[str, str], Callable[[], None] | None], RunningApp]


class DriverError(Exception):
    """One line: what the driver could not do with the app, and what to do about it."""


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


class AppDriver(ABC):
    """One kind of app. `target` holds its configuration (paths, locators, start command, secrets' variables)."""

    name = "app"
    capabilities: frozenset[Capability] = frozenset()
    seeding_concurrency = 1  # how many seeding calls the app may be sent at once (an agent server's are slow turns)
    kept_fields: tuple[str, ...] = ()  # which of MEMORY_FIELDS recall_by_own_text reads back of each memory
    writes_memories_later = False  # the app writes memories on its own after a turn: `settle` waits for them

    def __init__(self, target: Target) -> None:
        self.target = target

    # -- life cycle ------------------------------------------------------------------------------------------------
    @abstractmethod
    def start(self, *, pg_dsn: str, redis_url: str, settings: dict[str, str], log_path: Path,
              data_dir: Path | None = None, port: int | None = None) -> RunningApp:
        """Start the app on this database and Redis with `settings`; return it once healthy. `data_dir`: the data
        folder of an earlier instance to start on again (a restart), for apps that keep data in files; `port`: the
        earlier instance's port (a browser's local storage belongs to an origin, port included)."""

    @abstractmethod
    def attach(self, base_url: str, admin_token: str | None) -> RunningApp:
        """An app that is already running: check it answers, start nothing."""

    def describe(self, app: RunningApp) -> dict[str, str]:
        """Name, version and stores of the app, for the report's environment."""
        return {"app": self.target.name, "version": str(app.health.get("version", ""))}

    # -- users -----------------------------------------------------------------------------------------------------
    @abstractmethod
    def create_user(self, app: RunningApp, name: str, email: str, password: str,
                    user_id: str | None = None) -> Account:
        """Create a user through the app's admin API; `user_id` only with REQUESTED_USER_IDS."""

    @abstractmethod
    def delete_user(self, app: RunningApp, account: Account) -> None:
        """Delete the user (a user already gone is fine)."""

    @abstractmethod
    def session(self, app: RunningApp, account: Account) -> UserSession:
        """Sign the user in through the API."""

    def try_sign_in(self, app: RunningApp, email: str, password: str) -> str:
        """One sign-in through the app's API, as a client that holds no session: "" when the app lets it in, else
        what the app said (a wrong password, a locked sign-in). Needs PASSWORD_SIGN_IN."""
        raise DriverError(f"the {self.name} driver cannot try a sign-in through the API")

    @abstractmethod
    def browser_state(self, app: RunningApp, session: UserSession) -> dict:
        """A Playwright storage_state (cookies and local storage) that opens the app signed in as the user."""

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        """Whether the app still takes the session held by a browser's storage_state (its cookies and local
        storage), e.g. one that was signed out of. Needs SERVER_SIGN_OUT."""
        raise DriverError(f"the {self.name} driver cannot check a browser's session")

    def shown_identity(self, account: Account) -> str:
        """How the signed-in user is named on the page."""
        return account.email

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        """Credentials of the shape of `like` for an identity the app never issued (a guessed token, an unknown user
        id): `accepts` must refuse them. Needs SERVER_SIGN_OUT or CHAT_API."""
        raise DriverError(f"the {self.name} driver cannot make up credentials")

    # -- memory ----------------------------------------------------------------------------------------------------
    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """How many rows of each kind the app's store still holds of these memories: the memory and its vector
        wherever the app keeps them (a vector store apart, or a column of the row). Needs DATABASE_ACCESS or
        MEMORY_REMAINS."""
        raise DriverError(f"the {self.name} driver cannot read what the store holds of a memory")

    def conversation_remains(self, app: RunningApp, conversation_id: str) -> dict[str, int]:
        """How many rows of each kind the app's store still holds of this conversation (the conversation, its
        messages). Needs CONVERSATION_REMAINS."""
        raise DriverError(f"the {self.name} driver cannot read what the store holds of a conversation")

    def settle(self, app: RunningApp, session: UserSession, turns_sent: int) -> None:  # noqa: B027
        """Wait until the memory writes the app makes on its own after a user's turns have landed (apps that write
        memories server-side, later). Waits for the app's work, never decides what it should have written."""

    # -- faults: the regressions or misconfigurations the kill matrix switches on ----------------------------------
    def fault_catalogue(self) -> list[dict[str, str]]:
        """Each entry: name, bug_class, and what the user sees; empty when the driver knows none."""
        return []

    def check_faults(self, names: list[str]) -> None:
        known = {f["name"] for f in self.fault_catalogue()}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise DriverError(f"unknown fault(s) {', '.join(unknown)} for {self.target.name}; its catalogue has: "
                              f"{', '.join(sorted(known)) or 'nothing'}")

    # -- optional capabilities -------------------------------------------------------------------------------------
    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        """What the app's stores still hold of a deleted user, counted by kind (e.g. {"memories": 0, ...}): rows of
        the user's id, and of the conversations and memories the user had. Needs DATABASE_ACCESS or ACCOUNT_REMAINS."""
        raise DriverError(f"the {self.name} driver cannot read the app's store")

    def edge_answers(self, app: RunningApp, session: UserSession) -> list[EdgeAnswer]:
        """With API_EDGES: `session`'s user's (and the admin's) requests at each edge the app's API documents, each
        with the status it promises; an account a request creates is deleted again."""
        raise DriverError(f"the {self.name} driver knows no edges of the app's API")

    def refused_starts(self, app: RunningApp) -> list[RefusedStart]:
        """With START_REFUSALS: the app started beside `app` (its databases, its settings) with each mistake its
        documentation warns its operators of, each run to its end."""
        raise DriverError(f"the {self.name} driver knows no mistakes its operators may start the app with")

    def add_user_by_tool(self, app: RunningApp, name: str, email: str, password: str) -> Account:
        """With ACCOUNT_TOOLS: an account added as an operator adds one, on the app's command line."""
        raise DriverError(f"the {self.name} driver cannot add an account with the app's command line")

    def delete_user_by_tool(self, app: RunningApp, account: Account) -> None:
        """With ACCOUNT_TOOLS: the account deleted on the app's command line, as an operator deletes one."""
        raise DriverError(f"the {self.name} driver cannot delete an account with the app's command line")

    def try_add_user_by_tool(self, app: RunningApp, email: str, password: str) -> ToolRun:
        """With ACCOUNT_TOOLS: the app's command line asked to add an account, however it ends (an operator's
        mistake: an address that has one)."""
        raise DriverError(f"the {self.name} driver cannot add an account with the app's command line")

    def try_delete_user_by_tool(self, app: RunningApp, email: str) -> ToolRun:
        """With ACCOUNT_TOOLS: the app's command line asked to delete the account of an address, however it ends (an
        operator's mistake: an address nobody has)."""
        raise DriverError(f"the {self.name} driver cannot delete an account with the app's command line")

    def import_users(self, app: RunningApp, users: list[NewUser]) -> dict[str, str]:
        """Create many users at once; one by one through the admin API unless the app has a bulk import. Users
        without a password get a random one nobody knows. Returns the app's own id of each user whose requested id
        it did not keep (empty with REQUESTED_USER_IDS: it kept every one)."""
        for user in users:
            self.create_user(app, user.name, user.email, user.password or secrets.token_urlsafe(18), user.id)
        return {}

    def import_history(self, app: RunningApp, records: Path, embedder: str,
                       user_ids: dict[str, str]) -> dict[str, str]:
        """Put a history's memories into the running app's own store, its owners already imported (HISTORY_IMPORT):
        JSON Lines of `id, user_id, conversation_id, text, created_at, expires_at` (+ `embedder`, `embedding_f32`
        where the history has the vector), through the app's bulk API or its store; `user_ids` maps a requested
        owner id to the app's own where it gave another. Returns the app's own id of each memory whose id the app
        did not keep (empty: it kept every one). A driver that imports also answers `recall_by_own_text`."""
        raise DriverError(f"the {self.name} driver cannot load a history into the app")

    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        """For every query, set-based, with the store's own similarity query (its operator, filters and index
        choice): the memory's row and the owner's best other match where it comes within NEAR_TIE of the memory's
        own score or above it. Needs DATABASE_ACCESS."""
        raise DriverError(f"the {self.name} driver cannot query the app's store")

    def nearest(self, app: RunningApp, owner_id: str, vectors: list[bytes | None], k: int) -> list[list[Hit]]:
        """The store's top k of the owner's memories for each vector, as the app ranks them now (capture).
        Needs DATABASE_ACCESS."""
        raise DriverError(f"the {self.name} driver cannot query the app's store")

    def remove_vector(self, app: RunningApp, memory_id: str) -> None:
        """Take one memory's vector out of the store by hand, as a failed re-embedding or a bad hand edit would, so
        that the suite can prove its replay names it. Needs DATABASE_ACCESS."""
        raise DriverError(f"the {self.name} driver cannot edit the app's store")

    def export_memories(self, app: RunningApp, path: Path) -> None:
        """Every memory of the app's store as JSON Lines (the target's `export` tool): id, user_id, conversation_id,
        text, created_at, expires_at, embedder, embedding_f32. Needs DATABASE_ACCESS."""
        raise DriverError(f"the {self.name} driver cannot export the app's memories")

    def vector_index_scans(self, app: RunningApp) -> dict[str, IndexScans]:
        """Each vector index of the app's store by name, with its kind and the scans counted so far: proof that the
        app's own searches went through an index of the kind it was given. Needs DATABASE_ACCESS."""
        raise DriverError(f"the {self.name} driver cannot read the app's index statistics")

    def vector_indexes(self, app: RunningApp) -> dict[str, VectorIndex]:
        """Each vector index of the app's store by name, as its database holds it: its kind, whether queries may use
        it, its build options and the condition of a partial one. Needs DATABASE_ACCESS."""
        raise DriverError(f"the {self.name} driver cannot read the app's indexes")

    def promised_vector_indexes(self, app: RunningApp, given: Sequence[str] = ()) -> dict[str, PromisedIndex]:
        """With INDEX_PROMISES: the vector indexes, by name, the app's documentation promises its store holds now, for
        the settings it runs with, the words `given` to the last bulk load's tool and the memories the store holds."""
        raise DriverError(f"the {self.name} driver knows no vector indexes the app promises")

    # -- the app's own tools (MIGRATION_TOOLS) ---------------------------------------------------------------------
    def load_legacy_store(self, app: RunningApp, records: Iterable[str], embedder: str,
                          timezone: str | None = None) -> None:
        """Empty the app's legacy store and load it with the JSON Lines records (id, user_id, conversation_id, text,
        created_at, expires_at, and optionally embedder + embedding_f32), through the app's own loading tool, each
        line given to it as it comes (the caller may still be making the next). created_at may be naive local time
        in `timezone`, the zone the store declares (the tool's {timezone}; empty when None)."""
        raise DriverError(f"the {self.name} driver has no legacy-store loading tool")

    def legacy_memory_ids(self, app: RunningApp) -> set[str]:
        """The id of every memory the app's legacy store holds, as its own tools read it back."""
        raise DriverError(f"the {self.name} driver cannot read the app's legacy store")

    def migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str] = ()) -> MigrationCounts:
        """Run the app's migration from its legacy store into its store, with this batch size and embedding model
        (and `extra` words an operator adds to its command)."""
        raise DriverError(f"the {self.name} driver has no migration tool")

    def try_load_legacy_store(self, app: RunningApp, records: str, embedder: str,
                              extra: Sequence[str] = ()) -> ToolRun:
        """The legacy store's loader given these records (JSON Lines, the app's own format) after what it holds, with
        `extra` words after its command, however it ends: an operator's file or command with a mistake in it."""
        raise DriverError(f"the {self.name} driver has no legacy-store loading tool")

    def try_migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str]) -> ToolRun:
        """The same migration with `extra` words after its command (an operator's mistake), however it ends."""
        raise DriverError(f"the {self.name} driver has no migration tool")

    def embed(self, texts: list[str], embedder: str) -> list[bytes | None]:
        """Each text as the app's own embedder embeds it (little-endian float32; None: the text has no vector),
        through the target's `embed` tool."""
        if not {"embed", "embed_f32"} & set(self.target.tools):
            raise DriverError(f"the {self.name} driver has no embedding tool: give {self.target.path.name} a "
                              "[tools] embed")
        return embed_texts_f32(self.target, texts, embedder)

    def advance_clock(self, app: RunningApp, days: float) -> None:
        raise DriverError(f"the {self.name} driver cannot move the app's clock")

    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp:
        raise DriverError(f"the {self.name} driver cannot change the embedding model")

    def upgrade(self, app: RunningApp, settings: dict[str, str], restart: RestartApp) -> RunningApp:
        """The app, running an older release (its settings' release_command), upgraded the way its operators do it:
        the target's own release started on its data with `settings` (APP_UPGRADE)."""
        raise DriverError(f"the {self.name} driver cannot upgrade the app")
