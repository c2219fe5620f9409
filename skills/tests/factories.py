"""Skills for tests, published and reviewed through the real services."""

from __future__ import annotations

from typing import Any

from brain.core.actors import Actor
from brain.models import Membership, Organisation
from conftest import make_actor, make_user
from skills.models import SkillVersion
from skills.services import approve_version, publish_skill


def admin_of(org: Organisation) -> Actor:
    return make_actor(org, make_user(org, role=Membership.ADMIN))


def publish(actor: Actor, slug: str = "deploy-guide", **kw: Any) -> SkillVersion:
    fields: dict[str, Any] = {"name": "Deploy guide", "content": "Step 1: build.\nStep 2: ship.\n", **kw}
    return publish_skill(actor=actor, slug=slug, **fields)


def published_and_approved(actor: Actor, slug: str = "deploy-guide", **kw: Any) -> SkillVersion:
    version = publish(actor, slug, **kw)
    return approve_version(actor=admin_of(actor.org), version_id=version.pk)
