"""Reads of Khoj's store: what remains of a memory taken back, and of a deleted user in every table holding its id."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from harness.app.app_launcher import RunningApp
from harness.drivers.base import Account
from harness.drivers.khoj.common import KhojCommon
from harness.services.databases import scalar


class KhojStoreReads(KhojCommon):
    def memory_remains(self, app: RunningApp, memory_ids: list[str]) -> dict[str, int]:
        """Khoj keeps a memory and its vector in one row of `database_usermemory`."""
        ids = [[int(i) for i in memory_ids]]
        with self._store(app) as conn:
            return {
                "database_usermemory rows": int(scalar(conn, "SELECT count(*) FROM database_usermemory "
                                                             "WHERE id = ANY(%s)", ids)),
                "database_usermemory.embeddings vectors": int(scalar(
                    conn, "SELECT count(*) FROM database_usermemory WHERE id = ANY(%s) AND embeddings IS NOT NULL",
                    ids)),
            }

    def remains_of(self, app: RunningApp, account: Account, conversation_ids: list[str],
                   memory_ids: list[str]) -> dict[str, int]:
        """Rows Khoj's tables still hold of the deleted user: every table with a column of the user's id (found in
        the catalogue), the user's own row, their conversations' and memories' rows."""
        counts: dict[str, int] = {}
        with self._store(app) as conn:
            tables = [r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
                "AND column_name = 'user_id' ORDER BY 1").fetchall()]
            checks: list[tuple[str, str, str, list[Any]]] = [(t, "user_id", "the user", [int(account.id)])
                                                              for t in tables]
            checks += [("database_khojuser", "id", "the user", [int(account.id)]),
                       ("database_usermemory", "id", "the memories", [int(i) for i in memory_ids if i.isdigit()]),
                       ("database_conversation", "id::text", "the conversations", list(conversation_ids))]
            for table, column, what, values in checks:
                where = sql.SQL(column) if "::" in column else sql.Identifier(column)
                query = sql.SQL("SELECT count(*) FROM {} WHERE {} = ANY(%s)").format(sql.Identifier(table), where)
                counts[f"{table}.{column.split('::')[0]} of {what}"] = int(scalar(conn, query, [values]))
        return counts
