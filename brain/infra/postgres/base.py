"""Django's PostgreSQL backend with two changes for the statements every call makes.

**A health check that asks the socket before the server.** Django checks a kept connection at
the start of each request (``CONN_HEALTH_CHECKS``) with a ``SELECT 1``: a round trip on every
MCP call's token and again on its tool, each in a thread of its own. A connection the server
ended (a restart, ``pg_terminate_backend``, an idle timeout) has had the server's goodbye or the
socket's end arrive on it, so it reads as ready: only then is the ``SELECT 1`` asked. An idle
connection with nothing waiting on its socket is taken as alive; should it be dead all the same
(a network cut that sent nothing), its first statement fails and Django checks it properly
before the next.

**Prepared statements, for the few that ask** (``prepared_cursor``, used by ``brain.infra.prepared``
and the call record). Django binds values on the client, so Postgres plans every statement
again; the bearer token's row, a join of seven tables, took 1 ms to plan and 0.2 ms to run. A
statement run through ``prepared_cursor`` is prepared once per connection and then only
executed. Every other statement is sent as Django sends it. Behind a pooler in transaction mode
this needs one that keeps prepared statements (PgBouncer 1.21 or later, ``max_prepared_statements``).
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper
from django.db.backends.utils import CursorWrapper
from psycopg.pq import TransactionStatus

# psycopg prepares a statement after this many runs, or at once when asked; none runs that often
# through a cursor that may prepare (Django's own cursors bind on the client and never do).
ONLY_WHEN_ASKED = 2**31 - 1


class _Preparing(psycopg.Cursor[Any]):
    """Binds on the server and prepares every statement it runs.

    A statement prepared on a connection can stop standing while the connection lives on: a
    migration run meanwhile changed the type of a column it returns (PostgreSQL then refuses it,
    "cached plan must not change result type", on every run until the connection closes), or its
    name is gone from the session (``DISCARD ALL`` from elsewhere, a pooler that moved the
    session). Outside a transaction nothing is lost with the failed run: every statement prepared
    on the connection is let go (``DEALLOCATE ALL``, which psycopg notices and forgets its own
    names on) and this one is prepared again, once. Inside a transaction the error stands, as
    any failed statement there does."""

    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Any:
        try:
            return super().execute(query, params, prepare=True, binary=binary)
        except (psycopg.errors.FeatureNotSupported, psycopg.errors.InvalidSqlStatementName):
            if self.connection.info.transaction_status != TransactionStatus.IDLE:
                raise
        self.connection.execute("DEALLOCATE ALL")
        return super().execute(query, params, prepare=True, binary=binary)


class DatabaseWrapper(PostgresWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        connection.prepare_threshold = ONLY_WHEN_ASKED
        return connection

    def prepared_cursor(self) -> CursorWrapper:
        """A cursor whose statements are prepared on this connection the first time they run:
        only for fixed statements run on every call, whose values are bound, never formatted."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(_Preparing(self.connection))  # type: ignore[attr-defined]

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        try:
            socket = select.poll()  # not select.select, which cannot watch a descriptor past 1023
            socket.register(connection.fileno(), select.POLLIN)
            waiting = socket.poll(0)
        except (OSError, ValueError):
            return False
        if not waiting and connection.info.transaction_status == TransactionStatus.IDLE:
            return True
        return bool(super().is_usable())
