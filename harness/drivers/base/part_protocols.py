"""The protocols of the parts a driver implements for the capabilities it offers (`parts.PARTS` says which): each
the calls the suite makes of the app for that part. Its core (life cycle, accounts, sessions) is AppDriver's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from harness.app.app_launcher import RunningApp
    from harness.app.app_tools import ToolRun
    from harness.app.legacy_store import MigrationCounts
    from harness.drivers.base.driver import RestartApp
    from harness.drivers.base.records import (
        Account,
        EdgeAnswer,
        OwnTextQuery,
        OwnTextResult,
        PromisedIndex,
        RefusedStart,
        StoppedApp,
    )
    from harness.drivers.base.session import UserSession
    from harness.services.databases import IndexScans, VectorIndex
    from harness.vocabulary.recall import Hit


@runtime_checkable
class HeldSessions(Protocol):
    """Whether the app still takes a session someone held; credentials it never issued."""

    def accepts(self, app: RunningApp, browser_state: dict) -> bool:
        """Whether the app still takes the session held by a browser's storage_state (its cookies and local
        storage), e.g. one that was signed out of. Needs SERVER_SIGN_OUT."""

    def made_up_credentials(self, app: RunningApp, like: dict) -> dict:
        """Credentials of the shape of `like` for an identity the app never issued (a guessed token, an unknown user
        id): `accepts` must refuse them. Needs SERVER_SIGN_OUT or CHAT_API."""


@runtime_checkable
class PasswordSignIn(Protocol):
    def try_sign_in(self, app: RunningApp, email: str, password: str, from_address: str | None = None) -> str:
        """One sign-in through the app's API, as a client that holds no session: "" when the app lets it in, else
        what the app said (a wrong password, a locked sign-in). `from_address`: the local address its connection
        leaves from (another client's on this machine's loopback), else the usual one. Needs PASSWORD_SIGN_IN."""


@runtime_checkable
class AccountTools(Protocol):
    def add_user_by_tool(self, app: RunningApp, name: str, email: str, password: str) -> Account:
        """With ACCOUNT_TOOLS: an account added as an operator adds one, on the app's command line."""

    def delete_user_by_tool(self, app: RunningApp, account: Account) -> None:
        """With ACCOUNT_TOOLS: the account deleted on the app's command line, as an operator deletes one."""

    def try_add_user_by_tool(self, app: RunningApp, email: str, password: str) -> ToolRun:
        """With ACCOUNT_TOOLS: the app's command line asked to add an account, however it ends (an operator's
        mistake: an address that has one)."""

    def try_delete_user_by_tool(self, app: RunningApp, email: str) -> ToolRun:
        """With ACCOUNT_TOOLS: the app's command line asked to delete the account of an address, however it ends (an
        operator's mistake: an address nobody has)."""


@runtime_checkable
class ApiEdges(Protocol):
    def edge_answers(self, app: RunningApp, session: UserSession) -> list[EdgeAnswer]:
        """With API_EDGES: `session`'s user's (and the admin's) requests at each edge the app's API documents, each
        with the status it promises; an account a request creates is deleted again."""


@runtime_checkable
class StartRefusals(Protocol):
    def refused_starts(self, app: RunningApp) -> list[RefusedStart]:
        """With START_REFUSALS: the app started beside `app` (its databases, its settings) with each mistake its
        documentation warns its operators of, each run to its end."""


@runtime_checkable
class MemoryRemains(Protocol):
    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """How many rows of each kind the app's store still holds of these memories: the memory and its vector
        wherever the app keeps them (a vector store apart, or a column of the row). Needs DATABASE_ACCESS or
        MEMORY_REMAINS."""


@runtime_checkable
class AccountRemains(Protocol):
    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        """What the app's stores still hold of a deleted user, counted by kind (e.g. {"memories": 0, ...}): rows of
        the user's id, and of the conversations and memories the user had. Needs DATABASE_ACCESS or ACCOUNT_REMAINS."""


@runtime_checkable
class ConversationRemains(Protocol):
    def conversation_remains(self, app: RunningApp, conversation_id: str) -> dict[str, int]:
        """How many rows of each kind the app's store still holds of this conversation (the conversation, its
        messages). Needs CONVERSATION_REMAINS."""


@runtime_checkable
class OwnTextRecall(Protocol):
    def recall_by_own_text(self, app: RunningApp, queries: list[OwnTextQuery]) -> list[OwnTextResult]:
        """For every query, set-based, with the store's own similarity query (its operator, filters and index
        choice): the memory's row and the owner's best other match where it comes within NEAR_TIE of the memory's
        own score or above it. Needs DATABASE_ACCESS."""


@runtime_checkable
class StoreReads(MemoryRemains, AccountRemains, OwnTextRecall, Protocol):
    """Direct reads (and the one hand edit) of the app's databases."""

    def nearest(self, app: RunningApp, owner_id: str, vectors: list[bytes | None], k: int) -> list[list[Hit]]:
        """The store's top k of the owner's memories for each vector, as the app ranks them now (capture).
        Needs DATABASE_ACCESS."""

    def remove_vector(self, app: RunningApp, memory_id: str) -> None:
        """Take one memory's vector out of the store by hand, as a failed re-embedding or a bad hand edit would, so
        that the suite can prove its replay names it. Needs DATABASE_ACCESS."""

    def export_memories(self, app: RunningApp, path: Path) -> None:
        """Every memory of the app's store as JSON Lines (the target's `export` tool): id, user_id, conversation_id,
        text, created_at, expires_at, embedder, embedding_f32. Needs DATABASE_ACCESS."""

    def vector_index_scans(self, app: RunningApp) -> dict[str, IndexScans]:
        """Each vector index of the app's store by name, with its kind and the scans counted so far: proof that the
        app's own searches went through an index of the kind it was given. Needs DATABASE_ACCESS."""

    def vector_indexes(self, app: RunningApp) -> dict[str, VectorIndex]:
        """Each vector index of the app's store by name, as its database holds it: its kind, whether queries may use
        it, its build options and the condition of a partial one. Needs DATABASE_ACCESS."""


@runtime_checkable
class IndexPromises(Protocol):
    def promised_vector_indexes(self, app: RunningApp, given: Sequence[str] = ()) -> dict[str, PromisedIndex]:
        """With INDEX_PROMISES: the vector indexes, by name, the app's documentation promises its store holds now, for
        the settings it runs with, the words `given` to the last bulk load's tool and the memories the store holds."""


@runtime_checkable
class HistoryImport(OwnTextRecall, Protocol):
    def import_history(self, app: RunningApp, records: Path, embedder: str,
                       user_ids: dict[str, str]) -> dict[str, str]:
        """Put a history's memories into the running app's own store, its owners already imported (HISTORY_IMPORT):
        JSON Lines of `id, user_id, conversation_id, text, created_at, expires_at` (+ `embedder`, `embedding_f32`
        where the history has the vector), through the app's bulk API or its store; `user_ids` maps a requested
        owner id to the app's own where it gave another. Returns the app's own id of each memory whose id the app
        did not keep (empty: it kept every one). A driver that imports also answers `recall_by_own_text`."""


@runtime_checkable
class MigrationTools(Protocol):
    def load_legacy_store(self, app: RunningApp, records: Iterable[str], embedder: str,
                          timezone: str | None = None) -> None:
        """Empty the app's legacy store and load it with the JSON Lines records (id, user_id, conversation_id, text,
        created_at, expires_at, and optionally embedder + embedding_f32), through the app's own loading tool, each
        line given to it as it comes (the caller may still be making the next). created_at may be naive local time
        in `timezone`, the zone the store declares (the tool's {timezone}; empty when None)."""

    def legacy_memory_ids(self, app: RunningApp) -> set[str]:
        """The id of every memory the app's legacy store holds, as its own tools read it back."""

    def migrate(self, app: RunningApp, batch_size: int, embedder: str,
                extra: Sequence[str] = ()) -> MigrationCounts:
        """Run the app's migration from its legacy store into its store, with this batch size and embedding model
        (and `extra` words an operator adds to its command)."""

    def try_load_legacy_store(self, app: RunningApp, records: str, embedder: str,
                              extra: Sequence[str] = ()) -> ToolRun:
        """The legacy store's loader given these records (JSON Lines, the app's own format) after what it holds, with
        `extra` words after its command, however it ends: an operator's file or command with a mistake in it."""

    def try_migrate(self, app: RunningApp, batch_size: int, embedder: str, extra: Sequence[str]) -> ToolRun:
        """The same migration with `extra` words after its command (an operator's mistake), however it ends."""


@runtime_checkable
class EmbeddingModelChange(Protocol):
    def change_embedding_model(self, app: RunningApp, model: str, restart: RestartApp) -> RunningApp: ...


@runtime_checkable
class AppUpgrade(Protocol):
    def upgrade(self, app: RunningApp, settings: dict[str, str], restart: RestartApp) -> RunningApp:
        """The app, running an older release (its settings' release_command), upgraded the way its operators do it:
        the target's own release started on its data with `settings` (APP_UPGRADE)."""


@runtime_checkable
class MovableClock(Protocol):
    def advance_clock(self, app: RunningApp, days: float) -> None: ...


@runtime_checkable
class OwnDatabases(Protocol):
    """The app run by its operator on databases it starts itself, their data in a folder the operator names."""

    def add_user_in_data_folder(self, folder: Path, name: str, email: str, password: str) -> Account:
        """An account added on the app's command line to the databases of the data folder `folder` (new, or the
        app's, stopped), as its operator adds one before starting it there; what the tool started is stopped again
        when it ends."""

    def start_on_own_databases(self, folder: Path, log_path: Path, port: int | None = None,
                               pg_dsn: str | None = None) -> RunningApp:
        """The app started as its operator starts it with no databases given, its own in `folder` (given `pg_dsn`,
        that database, and only the others its own), once healthy, having said what its documentation promises at
        that start."""

    def stop_on_own_databases(self, app: RunningApp, interrupt: bool = False) -> StoppedApp:
        """The app started by start_on_own_databases stopped as its operator stops it (a service manager's SIGTERM,
        or Ctrl-C where `interrupt`), run to its end."""

