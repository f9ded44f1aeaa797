"""Create Letta's tables in an empty PostgreSQL database with Letta's own ORM: Letta's wheel ships no migrations and
creates no tables at start.

Run with Letta's own Python (its virtual environment, `make letta`), with the database in LETTA_PG_URI, as Letta
reads it: the URI must be set before `letta` is imported, since only then is `archival_passages.embedding` pgvector's
vector type. Set HOME too, or importing letta writes `~/.letta/logs`.

    LETTA_PG_URI=postgresql://postgres@localhost/db?host=/socket/dir HOME=/tmp/x \
        .tools/letta/bin/python tools/letta_schema.py

The database goes through Letta's own URI conversion and driver (asyncpg), so a URI that works here works for the
server. Idempotent: tables that exist are left alone. Prints `letta schema: N tables` on success.
"""

from __future__ import annotations

import asyncio
import os
import sys


async def create_schema(uri: str) -> int:
    import letta.orm  # noqa: F401 - registers every model on Base.metadata
    from letta.database_utils import get_database_uri_for_context
    from letta.orm import Base
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(get_database_uri_for_context(uri, "async"))
    try:
        async with engine.begin() as conn:
            await conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
            await conn.run_sync(Base.metadata.create_all)
            # Only Letta's (unshipped) alembic migration gives messages.sequence_id its default.
            await conn.execute(text("CREATE SEQUENCE IF NOT EXISTS message_seq OWNED BY messages.sequence_id"))
            await conn.execute(text("ALTER TABLE messages ALTER COLUMN sequence_id SET DEFAULT nextval('message_seq')"))
            tables = await conn.execute(text("SELECT count(*) FROM information_schema.tables "
                                             "WHERE table_schema = 'public'"))
            return int(tables.scalar_one())
    finally:
        await engine.dispose()


def main() -> int:
    uri = os.environ.get("LETTA_PG_URI")
    if not uri:
        print("ERROR: set LETTA_PG_URI to the database Letta will use", file=sys.stderr)
        return 2
    try:
        count = asyncio.run(create_schema(uri))
    except Exception as e:  # noqa: BLE001 - one line for the driver's error, whatever the database said
        print(f"ERROR: Letta's tables could not be created: {type(e).__name__}: {str(e).splitlines()[0][:300]}",
              file=sys.stderr)
        return 1
    print(f"letta schema: {count} tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
