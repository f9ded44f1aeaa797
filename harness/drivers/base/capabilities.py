"""What an app may offer besides the common core, each named in one line a skip says (Capability), and the one
error a driver raises."""

from __future__ import annotations

from enum import StrEnum


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
    # add_user_in_data_folder, start_on_own_databases, stop_on_own_databases: the app run by its operator on databases
    # it starts itself, their data in a folder the operator names
    OWN_DATABASES = "running on databases of its own, in a data folder its operator names"


class DriverError(Exception):
    """One line: what the driver could not do with the app, and what to do about it."""
