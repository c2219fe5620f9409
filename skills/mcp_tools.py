"""Skill tools: load a skill in use, publish a version for review, and the skill list init shows."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from brain.core.actors import Actor
from brain.core.errors import NotFound
from brain.mcp.registry import ToolOutput, mcp_tool
from brain.mcp.skills import SKILL_PROVIDERS, SkillSummary
from skills import selectors, services
from skills.models import CONTENT_MAX, DEFAULT_VERSION, DESCRIPTION_MAX, NAME_MAX, SLUG_MAX, VERSION_MAX, SkillVersion

# --- skills_get ---------------------------------------------------------------------------


class GetSkillArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slug: str = Field(min_length=1, max_length=SLUG_MAX, description="The skill's slug, as listed by init.")


class SkillOut(ToolOutput):
    slug: str
    name: str
    description: str
    version: str
    categories: list[str]
    tags: list[str]
    content: str
    assets: list[dict[str, Any]]
    scripts: list[dict[str, Any]]
    metadata: dict[str, Any]

    @classmethod
    def of(cls, version: SkillVersion) -> SkillOut:
        return cls(
            slug=version.skill.slug,
            name=version.name,
            description=version.description,
            version=version.version,
            categories=[category.slug for category in version.categories.all()],
            tags=list(version.tags),
            content=version.content,
            assets=list(version.assets),
            scripts=list(version.scripts),
            metadata=dict(version.metadata),
        )

    def to_text(self) -> str:
        lines = [f"# {self.name} ({self.slug}, version {self.version})"]
        if self.description:
            lines.append(self.description)
        lines += ["", self.content]
        for label, value in (("Assets", self.assets), ("Scripts", self.scripts), ("Metadata", self.metadata)):
            if value:
                lines += ["", f"{label}: {json.dumps(value, ensure_ascii=False)}"]
        return "\n".join(lines)


@mcp_tool("skills_get", title="Get Company Skill", args=GetSkillArgs, output=SkillOut, idempotent=True)
def skills_get_tool(actor: Actor, args: GetSkillArgs) -> SkillOut:
    """Load the full instructions of one company skill: a procedure or playbook the organisation
    wrote for assistants. Call it when a skill's description in the init list fits the task in
    front of you, then follow the instructions it returns. Pass the slug exactly as init lists it.
    Returns the approved version in use: name, description, version, categories, tags, the
    content itself, and any assets, scripts and metadata it carries. A slug that is not in your
    init list (unknown, still waiting for review, archived, or outside your categories) is not
    found. Changes nothing."""
    return SkillOut.of(selectors.get_skill(actor=actor, slug=args.slug))


# --- skills_publish -----------------------------------------------------------------------

JsonObject = dict[str, Any]


class PublishSkillArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slug: str = Field(
        min_length=1,
        max_length=SLUG_MAX,
        description=(
            f"The skill's identifier, up to {SLUG_MAX} characters: letters, digits and hyphens, starting with "
            "a letter or digit. Brain lowercases it. Reuse an existing slug to propose a new version."
        ),
    )
    name: str = Field(min_length=1, max_length=NAME_MAX, description=f"A readable name, up to {NAME_MAX}.")
    content: str = Field(
        min_length=1, max_length=CONTENT_MAX, description=f"The instructions themselves, up to {CONTENT_MAX:,}."
    )
    description: str = Field(
        "",
        max_length=DESCRIPTION_MAX,
        description=(
            f"Up to {DESCRIPTION_MAX:,} characters. Assistants decide from it whether to load the skill, so "
            "say what task it is for."
        ),
    )
    tags: list[Annotated[str, Field(max_length=services.TAG_MAX)]] = Field(
        default_factory=list,
        max_length=services.MAX_TAGS,
        description=f"Short labels, up to {services.MAX_TAGS} of up to {services.TAG_MAX} characters each.",
    )
    categories: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=50,
        description=(
            "Knowledge category slugs that decide who may use the skill. Empty means the default category "
            "(general). Unknown categories, and categories you cannot read, are refused."
        ),
    )
    version: str = Field(
        DEFAULT_VERSION, min_length=1, max_length=VERSION_MAX, description=f"A version label, up to {VERSION_MAX}."
    )
    assets: list[JsonObject] = Field(
        default_factory=list,
        max_length=services.MAX_ITEMS,
        description=f"Objects the skill carries with it (files, links, templates), up to {services.MAX_ITEMS}.",
    )
    scripts: list[JsonObject] = Field(
        default_factory=list,
        max_length=services.MAX_ITEMS,
        description=f"Script objects the skill carries with it, up to {services.MAX_ITEMS}.",
    )
    metadata: JsonObject = Field(default_factory=dict, description="Any further fields, kept with the version.")

    @field_validator("assets", "scripts", "metadata")
    @classmethod
    def _not_too_large(cls, value: Any) -> Any:
        if len(json.dumps(value, ensure_ascii=False, default=str)) > services.JSON_MAX:
            raise ValueError(f"too large: keep it under {services.JSON_MAX:,} characters of JSON")
        return value


class PublishOut(ToolOutput):
    slug: str
    name: str
    version: str
    status: str = Field(description="Always pending: an admin reviews every published version.")
    version_in_use: str | None = Field(None, description="The approved version assistants keep getting meanwhile.")
    message: str

    def to_text(self) -> str:
        return self.message


@mcp_tool(
    "skills_publish",
    title="Publish Company Skill",
    args=PublishSkillArgs,
    output=PublishOut,
    scope="write",
    destructive=True,
    writes="shared",
)
def skills_publish_tool(actor: Actor, args: PublishSkillArgs) -> PublishOut:
    """Send a skill (reusable instructions for assistants) to Brain for an admin's review. Use it
    only when the user asks to publish or update a skill, after they have seen the text. slug,
    name and content are required; name up to 240 characters, content up to 200,000, description
    up to 2,000, version up to 80 (default 1.0.0): longer text is refused, not cut. The slug is
    lowercased; an existing slug gets a new version. Every version arrives pending and nobody can
    use it until an admin approves it; if the skill already has an approved version, that one
    stays in use meanwhile. Without categories the default category (general) applies; unknown
    categories and categories the user cannot read are refused. Tell the user the skill now waits
    for review."""
    submitted = services.publish_skill(actor=actor, **args.model_dump())
    in_use = _version_in_use(actor, submitted.skill.slug)
    waiting = f"Version {submitted.version} of {submitted.skill.slug} is pending until an admin reviews it."
    if in_use is None:
        meanwhile = "Nobody can use the skill until an admin approves it."
    else:
        meanwhile = f"Until then the approved version {in_use} stays in use."
    return PublishOut(
        slug=submitted.skill.slug,
        name=submitted.name,
        version=submitted.version,
        status=submitted.status,
        version_in_use=in_use,
        message=f"{waiting} {meanwhile}",
    )


def _version_in_use(actor: Actor, slug: str) -> str | None:
    # Only a version the caller may use is named, so publishing reveals nothing about hidden skills.
    try:
        return selectors.get_skill(actor=actor, slug=slug).version
    except NotFound:
        return None


# --- the skill list in init ---------------------------------------------------------------


def skill_summaries(actor: Actor) -> list[SkillSummary]:
    summaries = []
    for skill in selectors.usable_skills(actor=actor):
        version = skill.current_version
        if version is None:
            continue
        summaries.append(
            SkillSummary(
                slug=skill.slug,
                name=version.name,
                description=version.description or None,
                categories=[category.slug for category in version.categories.all()],
                version=version.version,
                status=version.status,
            )
        )
    return summaries


SKILL_PROVIDERS.plug(skill_summaries)
