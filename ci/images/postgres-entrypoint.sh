#!/bin/sh
# Behaves like the official postgres image's entrypoint, for what testcontainers uses: POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB; the cluster initialised on first start; password login over TCP; port 5432.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
as_postgres() { runuser -u postgres -- "$@"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA" && chown postgres "$PGDATA" && chmod 700 "$PGDATA"
  pwfile=$(mktemp) && printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --no-instructions >/dev/null
  rm -f "$pwfile"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    as_postgres psql -q -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
    as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "PostgreSQL init process complete; ready for start up."
fi
exec runuser -u postgres -- postgres -D "$PGDATA"
