"""The jobs tests' organisation has jobs switched on: nothing runs while the switch is off."""

from __future__ import annotations

import pytest

from brain.models import Features, Organisation
from conftest import make_org


@pytest.fixture
def org(db: None) -> Organisation:
    made = make_org()
    Features.objects.filter(org=made).update(jobs=True)
    return Organisation.objects.get(pk=made.pk)  # without the cached switches of before
