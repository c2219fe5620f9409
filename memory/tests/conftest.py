"""Fixtures shared by the memory tests."""

from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from brain.core.actors import Actor
from brain.models import Category, Organisation
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


@pytest.fixture
def load_file(org: Organisation, tmp_path: Path, settings) -> Callable[[str, str], tuple[Actor, str]]:
    """Loads one file with ``manage.py ingest --wait`` as the organisation's admin: that admin,
    able to read, and what the command printed."""
    settings.DATA_DIR = tmp_path / "data"  # the ingest command's log file
    admin = make_user(org, role="admin", email="admin@example.com")

    def load(name: str, text: str) -> tuple[Actor, str]:
        folder = tmp_path / "files"
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(text)
        out = StringIO()
        call_command("ingest", str(folder), "--org", org.slug, "--wait", "--no-progress", stdout=out, stderr=StringIO())
        return make_actor(org, admin), out.getvalue()

    return load
