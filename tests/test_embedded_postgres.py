"""The embedded cluster's cache size: chosen from the machine, set at start, and an operator's
value that is not a size refused with a message saying what to write."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from django.db import connection

from launcher import services

MB = 2**20


@pytest.mark.parametrize(
    ("memory", "expected"),
    [(256 * MB, "128MB"), (4096 * MB, "1024MB"), (24 * 1024 * MB, "2048MB")],
)
def test_the_cache_is_a_quarter_of_memory_within_bounds(monkeypatch, memory, expected):
    monkeypatch.delenv("BRAIN_PG_SHARED_BUFFERS", raising=False)
    monkeypatch.setattr(services, "machine_memory", lambda: memory)
    assert services.shared_buffers() == expected


def test_an_operator_chooses_the_cache(monkeypatch):
    monkeypatch.setenv("BRAIN_PG_SHARED_BUFFERS", " 512MB ")
    assert services.shared_buffers() == "512MB"


def test_a_container_limit_counts_as_the_machines_memory():
    limit = Path("/sys/fs/cgroup/memory.max")
    text = limit.read_text().strip() if limit.exists() else "max"
    assert services.machine_memory() > 0
    if text.isdigit():
        assert services.machine_memory() <= int(text)


def _admin_connection() -> psycopg.Connection:
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"], port=db["PORT"] or None, user=db["USER"], dbname=db["NAME"], autocommit=True
    )


@pytest.mark.django_db
def test_the_embedded_cluster_runs_with_the_chosen_cache():
    if not str(connection.settings_dict["HOST"]).startswith(str(services.data_dir())):
        pytest.skip("the tests run against a Postgres the launcher did not start")
    with _admin_connection() as conn:
        row = conn.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)", [services.shared_buffers()]
        ).fetchone()
        assert row is not None
        assert row[0]
        # Asking again for what it already has changes nothing, so the cluster is not restarted.
        assert services._size_cache(conn, services.shared_buffers()) is False


@pytest.mark.django_db
def test_a_value_that_is_not_a_size_is_refused_with_what_to_write():
    with _admin_connection() as conn, pytest.raises(SystemExit) as refused:
        services._size_cache(conn, "lots")
    assert "BRAIN_PG_SHARED_BUFFERS='lots'" in str(refused.value)
    assert "512MB" in str(refused.value)
