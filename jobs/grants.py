"""What an unattended run may do, and with whose reach it reads.

A run reads with what every reader of its report may read: a shared job's report goes to every
member, so its run reads only what every member may (``memory.access.for_every_member``); a
personal job reports to its owner alone and reads with the owner's reach.

A run acts as its owner only as far as the owner granted: it is offered the read-only tools and
the write tools its owner named when creating the job (none by default). Tools that take back
memory, settle a question for everyone, or reach a person (``NEVER``) need a person to confirm
and are never given to a run, whatever the grant says.
"""

from __future__ import annotations

from collections.abc import Iterable

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument
from brain.core.selectors import enabled_features
from brain.mcp.registry import TOOLS, ToolSpec, is_visible
from jobs.models import Job, Run
from memory.access import for_every_member

JOB_TOOLS = frozenset({"schedule_once", "schedule_job", "list_jobs", "update_job"})
NEVER = frozenset({"forget", "answer_contradiction", "request_human_info"})


def run_actor(job: Job, owner: Actor) -> tuple[Actor, str]:
    """The actor a run of ``job`` reads and acts with, and who may read its report."""
    if job.scope == Job.Scope.SHARED:
        return for_every_member(owner), Run.Audience.MEMBERS
    return owner, Run.Audience.OWNER


def grantable(spec: ToolSpec) -> bool:
    """A write tool an owner may hand to their job's unattended runs: never an ACTION tool, which runs
    only when a person asked for exactly that."""
    return not spec.read_only and not spec.action and spec.name not in JOB_TOOLS | NEVER


def grantable_tools(actor: Actor) -> list[str]:
    """The write tools ``actor`` may hand to a job of theirs, by name."""
    features = enabled_features(actor=actor)
    return sorted(
        s.name for s in TOOLS.values() if grantable(s) and is_visible(s, scopes=actor.scopes, features=features)
    )


def checked_grant(actor: Actor, names: Iterable[str] | None) -> list[str]:
    """The write tools ``actor`` grants a job, refused with the ones they may grant."""
    chosen = sorted(set(names or []))
    allowed = grantable_tools(actor)
    wrong = [name for name in chosen if name not in allowed]
    if wrong:
        never = ", ".join(sorted(NEVER))
        raise InvalidArgument(
            f"write_tools may name only write tools a job may use: {', '.join(allowed) or 'none here'}; got "
            f"{', '.join(repr(w) for w in wrong)}. Reading tools need no grant; {never} and the job tools are "
            "never given to a job, as they need a person to confirm."
        )
    return chosen


def may_call(job: Job, spec: ToolSpec) -> bool:
    """Whether an unattended run of ``job`` is offered (and may call) the tool."""
    if spec.name in JOB_TOOLS | NEVER or spec.action:
        return False
    if spec.name == "remember" and job.memory == Job.Memory.OFF:
        return False
    return spec.read_only or spec.name in job.write_tools
