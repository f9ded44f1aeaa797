"""The driver protocol: what the steps need from a chat app besides the browser, and what a driver lacking an
optional capability answers."""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from harness.app.app_launcher import RunningApp
from harness.app.app_tools import ToolRun, embed_texts_f32
from harness.app.legacy_store import MigrationCounts
from harness.app.target import Target
from harness.drivers.base.capabilities import Capability, DriverError
from harness.drivers.base.records import (
    Account,
    EdgeAnswer,
    NewUser,
    OwnTextQuery,
    OwnTextResult,
    PromisedIndex,
    RefusedStart,
    StoppedApp,
)
from harness.drivers.base.session import UserSession
from harness.services.databases import IndexScans, VectorIndex
from harness.vocabulary.recall import Hit

# Given by the suite to a driver: stop `app`, run `between` (a tool on its stopped data), start it again on the same
# data with `settings`; the suite keeps track of the new instance.
RestartApp = Callable[[RunningApp, dict[str, str], Callable[[], None] | None], RunningApp]


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

    def try_sign_in(self, app: RunningApp, email: str, password: str, from_address: str | None = None) -> str:
        """One sign-in through the app's API, as a client that holds no session: "" when the app lets it in, else
        what the app said (a wrong password, a locked sign-in). `from_address`: the local address its connection
        leaves from (another client's on this machine's loopback), else the usual one. Needs PASSWORD_SIGN_IN."""
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

    def add_user_in_data_folder(self, folder: Path, name: str, email: str, password: str) -> Account:
        """With OWN_DATABASES: an account added on the app's command line to the databases of the data folder `folder`
        (new, or the app's, stopped), as its operator adds one before starting it there; what the tool started is
        stopped again when it ends."""
        raise DriverError(f"the {self.name} driver cannot run the app on databases of its own")

    def start_on_own_databases(self, folder: Path, log_path: Path, port: int | None = None,
                               pg_dsn: str | None = None) -> RunningApp:
        """With OWN_DATABASES: the app started as its operator starts it with no databases given, its own in
        `folder` (given `pg_dsn`, that database, and only the others its own), once healthy, having said what its
        documentation promises at that start."""
        raise DriverError(f"the {self.name} driver cannot run the app on databases of its own")

    def stop_on_own_databases(self, app: RunningApp, interrupt: bool = False) -> StoppedApp:
        """With OWN_DATABASES: the app started by start_on_own_databases stopped as its operator stops it (a service
        manager's SIGTERM, or Ctrl-C where `interrupt`), run to its end."""
        raise DriverError(f"the {self.name} driver cannot run the app on databases of its own")

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
