"""Fixtures the connectors' tests share: the GitHub stand-in with Brain pointed at it, and an admin."""

from __future__ import annotations

import pytest

from conftest import make_actor, make_org, make_user
from connectors.tests.github_server import github_server


@pytest.fixture
def github(settings):
    with github_server() as fake:
        settings.BRAIN_GITHUB_API_URL = fake.base
        yield fake


@pytest.fixture
def admin_actor():
    org = make_org()
    return make_actor(org, make_user(org, role="admin"))
