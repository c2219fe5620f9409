"""The skills the init tool lists: the shape of one and the seam the apps that offer skills plug
into (the skills app, ``skills.mcp_tools``). Declared in the core so that an app offering skills
imports nothing of the core's tools."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from brain.core.actors import Actor
from brain.infra.hooks import Seam


class SkillSummary(BaseModel):
    slug: str
    name: str
    description: str | None = None
    categories: list[str] | None = None
    version: str | None = None
    status: str | None = None


# Apps that offer skills plug in a function returning the caller's usable skills.
SKILL_PROVIDERS: Seam[Callable[[Actor], list[SkillSummary]]] = Seam(
    "skill providers", "called with the caller; returns the skills they may use, for init"
)


def usable_skills(actor: Actor) -> list[SkillSummary]:
    skills: list[SkillSummary] = []
    for provider in SKILL_PROVIDERS:
        skills.extend(provider(actor))
    return skills
