"""Every test gets one tier marker, so the fast loop can leave out the slow tiers."""

from __future__ import annotations

import pytest

from conftest import tier_of

pytestmark = pytest.mark.unit


def test_a_test_that_opens_chromium_is_browser_even_with_a_live_server() -> None:
    assert tier_of(["brain_url", "transactional_db"], ["browser_page", "log_in"], "test_people.py", True) == "browser"


def test_the_worker_fixture_makes_a_test_worker_even_with_a_live_server() -> None:
    assert tier_of(["brain_url", "worker", "transactional_db"], [], "test_worker_e2e.py", True) == "worker"


def test_a_test_in_a_file_that_starts_the_launcher_is_worker() -> None:
    assert tier_of(["tmp_path", "transactional_db"], [], "test_run_command.py", True) == "worker"


def test_a_test_of_the_served_app_is_live_server() -> None:
    assert tier_of(["brain_url", "transactional_db"], ["call"], "test_mcp_contract.py", True) == "live_server"


def test_a_test_marked_django_db_or_using_db_is_db() -> None:
    assert tier_of([], [], "test_services.py", True) == "db"
    assert tier_of(["org", "db"], [], "test_services.py", False) == "db"


def test_a_test_without_database_server_or_browser_is_unit() -> None:
    assert tier_of(["tmp_path"], ["Supervisor"], "test_supervise.py", False) == "unit"


def test_every_collected_test_carries_exactly_one_tier(request: pytest.FixtureRequest) -> None:
    tiers = ("browser", "worker", "live_server", "db", "unit")
    for item in request.session.items:
        assert [t for t in tiers if item.get_closest_marker(t)] != [], item.nodeid
        assert len([m for m in item.iter_markers() if m.name in tiers]) == 1, item.nodeid
