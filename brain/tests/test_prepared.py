"""Statements composed once and prepared on the server (brain.infra.prepared, brain.infra.postgres)."""

from __future__ import annotations

import select
from datetime import date

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from brain.core.services import TOKEN_BY_HASH, hash_token, live_tokens
from brain.infra.postgres import prepared_cursor
from brain.infra.prepared import Prepared
from brain.models import ApiToken
from conftest import make_org, make_token
from usage.models import Month
from usage.selectors import ACCOUNT_WITH_MONTH, get_usage

pytestmark = pytest.mark.django_db


def _fields(obj: object) -> dict[str, object]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}  # type: ignore[attr-defined]


def test_a_prepared_token_is_what_the_queryset_answers_with_the_same_objects_loaded(org):
    issued = make_token(org)
    hashed = hash_token(issued.plaintext)
    expected = live_tokens().filter(hashed=hashed).first()
    token = TOKEN_BY_HASH.first(hashed=hashed)
    assert token is not None
    assert expected is not None
    assert _fields(token) == _fields(expected)
    with CaptureQueriesContext(connection) as queries:  # loaded with it, as select_related loads them
        related = [token.org, token.user, token.org.account, token.org.account.plan, token.org.features]
    assert len(queries) == 0, [q["sql"] for q in queries.captured_queries]
    assert _fields(related[0]) == _fields(expected.org)
    assert _fields(related[3]) == _fields(expected.org.account.plan)
    loaded = [(getattr(t, "member_role", None), getattr(t, "member_profile", None)) for t in (token, expected)]
    assert loaded[0] == loaded[1]
    assert token._state.adding is False
    assert token._state.db == "default"


def test_an_unknown_value_finds_nothing_and_a_second_token_is_its_own(org):
    first, second = make_token(org), make_token(org)
    assert TOKEN_BY_HASH.first(hashed=hash_token("brn_nobody")) is None
    found = TOKEN_BY_HASH.first(hashed=hash_token(second.plaintext))
    assert found is not None
    assert found.pk == second.token.pk != first.token.pk


def test_values_of_each_type_reach_the_statement(org):
    month = date(2026, 12, 1)
    Month.objects.create(org=org, month=month, reads=7, free_used=3, credits_spent=2)
    account = ACCOUNT_WITH_MONTH.first(org_id=org.pk, month=month)
    assert account is not None
    counters = ("month_reads", "month_free_used", "month_credits_spent")
    assert [getattr(account, name) for name in counters] == [7, 3, 2]
    empty = ACCOUNT_WITH_MONTH.first(org_id=org.pk, month=date(2026, 11, 1))
    assert empty is not None
    assert getattr(empty, "month_reads", 0) is None


def test_the_usage_of_an_organisation_without_an_account_is_still_answered():
    org = make_org()
    org.account.delete()
    usage = get_usage(org=org)  # the account is made on the default plan, as get_account makes it
    assert usage.reads == 0
    assert usage.plan


def test_a_value_that_never_reaches_the_statement_is_refused_when_composed():
    lost = Prepared(lambda hashed: ApiToken.objects.filter(hashed="fixed"), hashed=str)
    with pytest.raises(ValueError, match="must reach the statement"):
        lost.first(hashed="anything")


def test_the_statement_is_prepared_once_on_its_connection(org):
    issued = make_token(org)
    for _ in range(3):
        assert TOKEN_BY_HASH.first(hashed=hash_token(issued.plaintext)) is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans + custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
            ['%brain_apitoken%"hashed"%'],
        )
        runs = [row[0] for row in cursor.fetchall()]
    assert max(runs, default=0) >= 3, runs


def test_django_s_own_statements_are_not_prepared(org):
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        before = cursor.fetchone()[0]
        for _ in range(10):
            list(ApiToken.objects.filter(org=org))
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == before


def test_a_prepared_cursor_reports_database_errors_as_django_s(org):
    from django.db import ProgrammingError

    with pytest.raises(ProgrammingError), prepared_cursor("default") as cursor:
        cursor.execute("SELECT no_such_column FROM brain_apitoken WHERE id = %s", [1])


@pytest.mark.django_db(transaction=True)
def test_a_statement_a_migration_changed_under_is_prepared_again():
    """A column the token's row returns changes type while the connection lives on (a migration
    run beside a running web process): PostgreSQL refuses the statement prepared before it on
    every run until the connection closes, so it is let go and prepared again, once."""
    org = make_org()
    issued = make_token(org)
    hashed = hash_token(issued.plaintext)
    assert TOKEN_BY_HASH.first(hashed=hashed) is not None  # prepared on this connection
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("ALTER TABLE brain_apitoken ALTER COLUMN name TYPE varchar(101)")
        found = TOKEN_BY_HASH.first(hashed=hashed)
        assert found is not None
        assert found.pk == issued.token.pk
    finally:
        with other.cursor() as cursor:
            cursor.execute("ALTER TABLE brain_apitoken ALTER COLUMN name TYPE varchar(100)")
        other.close()
    assert TOKEN_BY_HASH.first(hashed=hashed) is not None


@pytest.mark.django_db(transaction=True)
def test_a_statement_whose_name_left_the_session_is_prepared_again_but_not_inside_a_transaction():
    from django.db import DatabaseError, transaction

    org = make_org()
    hashed = hash_token(make_token(org).plaintext)
    assert TOKEN_BY_HASH.first(hashed=hashed) is not None
    # Behind psycopg's back, as a pooler that moved the session to another server connection would.
    connection.connection.pgconn.exec_(b"DEALLOCATE ALL")
    assert TOKEN_BY_HASH.first(hashed=hashed) is not None
    connection.connection.pgconn.exec_(b"DEALLOCATE ALL")
    with pytest.raises(DatabaseError), transaction.atomic():  # the failed run spoilt the transaction
        TOKEN_BY_HASH.first(hashed=hashed)
    assert TOKEN_BY_HASH.first(hashed=hashed) is not None


# --- the health check -----------------------------------------------------------------------


def test_a_sound_idle_connection_is_taken_as_usable_without_a_round_trip(monkeypatch):
    fresh = connections.create_connection("default")
    try:
        fresh.ensure_connection()
        asked = []

        def ask(self: object) -> bool:
            asked.append(1)
            return True

        monkeypatch.setattr(type(fresh).__mro__[1], "is_usable", ask)
        assert fresh.is_usable() is True
        assert asked == []
    finally:
        fresh.close()


def test_a_connection_the_server_ended_is_not_usable():
    fresh = connections.create_connection("default")
    try:
        fresh.ensure_connection()
        with fresh.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        # Wait on the socket itself: the server's goodbye arrives when it arrives.
        select.select([fresh.connection.fileno()], [], [])
        assert fresh.is_usable() is False
    finally:
        fresh.close()
