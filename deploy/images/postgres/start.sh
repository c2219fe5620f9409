#!/bin/sh
# Entry point of the Postgres image: on first start, a cluster in PGDATA whose superuser is
# POSTGRES_USER with POSTGRES_PASSWORD, and the database POSTGRES_DB; then the server, listening
# on every address of the container and asking for the password over TCP.
set -eu

: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-start: set POSTGRES_PASSWORD (the password of $POSTGRES_USER over TCP)." >&2
    exit 1
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
    initdb --username="$POSTGRES_USER" --pwfile="$password_file" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\";" | postgres --single -D "$PGDATA" -j postgres >/dev/null
    fi
    echo "postgres-start: made the cluster in $PGDATA with the database $POSTGRES_DB"
fi

if [ "${1:-}" = postgres ]; then
    shift
    exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/run/postgresql "$@"
fi
exec "$@"
