"""Fixtures shared by the memory tests."""

import pytest
from django.contrib.auth.models import Group

from brain.actors import Actor
from brain.models import Category
from conftest import make_actor, make_user
from memory.tests.embedding_stub import stub_url  # noqa: F401 (a fixture)


@pytest.fixture
def insider(actor: Actor) -> Actor:
    """A member of the restricted 'board' category; ``actor`` is not."""
    board = Category.objects.create(org=actor.org, slug="board", name="Board", restricted=True)
    group = Group.objects.create(name=f"board-{actor.org.pk}")
    board.groups.add(group)
    member = make_actor(actor.org, make_user(actor.org))
    member.user.groups.add(group)
    return member
