"""schedule_once, schedule_job, list_jobs, update_job: visible only while the jobs switch is on.
Each answer's text is lines a model reads easily, ids first."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from brain.core.actors import Actor
from brain.mcp.limits import Clamped
from brain.mcp.registry import ToolOutput, mcp_tool
from jobs import selectors, services
from jobs.models import Run
from jobs.services import Scheduled

FEATURE = "jobs"
CRON_HELP = (
    'Five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5" (weekdays 09:00), '
    '"0 * * * *" (hourly), "30 17 * * 5" (Fridays 17:30), "0 9 1 * *" (the 1st of each month). '
    "Nothing more often than every 5 minutes."
)


class JobOut(BaseModel):
    id: str
    name: str
    kind: str
    schedule: str = Field(description="The schedule in words, with the next run.")
    cron: str
    at: datetime | None
    timezone: str
    scope: str
    mode: str
    model: str
    memory: str
    write_tools: list[str] = Field(description="The write tools its runs may use; every reading tool needs no grant.")
    enabled: bool
    notify: bool
    paused_reason: str
    next_run_at: datetime | None
    last_run_at: datetime | None
    last_status: str
    owner: str

    def lines(self) -> list[str]:
        """The job as lines a model reads easily, its id first."""
        state = "" if self.enabled else " (paused" + (f": {self.paused_reason}" if self.paused_reason else "") + ")"
        last = (
            f"last run {self.last_status} at {self.last_run_at:%Y-%m-%d %H:%M} UTC"
            if self.last_run_at
            else "not run yet"
        )
        extras = [f"mode {self.mode}", f"memory {self.memory}", f"owner {self.owner}"]
        if self.model != "auto":
            extras.append(f"model {self.model}")
        if self.notify:
            extras.append("mails each report")
        return [f"{self.id}: {self.name} ({self.scope}){state}", f"  {self.schedule}; {last}", f"  {', '.join(extras)}"]


def shown(item: Scheduled) -> JobOut:
    job = item.job
    owner = job.owner.get_full_name() or job.owner.get_username()
    return JobOut(
        id=job.public_id,
        name=job.name,
        kind=job.kind,
        schedule=item.schedule,
        cron=job.cron,
        at=job.at,
        timezone=job.time_zone,
        scope=job.scope,
        mode=job.mode,
        model=job.model,
        memory=job.memory,
        write_tools=job.write_tools,
        enabled=job.enabled,
        notify=job.notify,
        paused_reason=job.paused_reason,
        next_run_at=job.next_run_at,
        last_run_at=job.last_run_at,
        last_status=job.last_status,
        owner=owner,
    )


class Common(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=120, description="A short name, e.g. 'Chase the Baltic invoice'.")
    prompt: str = Field(
        max_length=8000,
        description="Complete instructions for a future assistant with no memory of "
        "this conversation: names, systems, filters, what the report should hold.",
    )
    timezone: str | None = Field(None, max_length=64, description="IANA time zone, e.g. Europe/Madrid (default UTC).")
    scope: Literal["personal", "shared"] = Field(
        "personal",
        description="personal: its reports are yours alone and it reads all you may read. shared: "
        "every member reads its reports and may pause, resume or run it, so it reads only what every member "
        "may read (no restricted categories, no personal memories); still run as you.",
    )
    mode: Literal["agent", "chat"] = Field("agent", description="agent: several steps (default); chat: one reply.")
    model: str | None = Field(None, max_length=100, description="A configured model id, or 'auto' (default).")
    memory: Literal["org", "personal", "off"] | None = Field(
        None, description="Where facts learned in a run are stored; defaults to the scope."
    )
    notify: bool = Field(False, description="Also mail the user each run's report.")
    write_tools: list[str] = Field(
        [],
        max_length=20,
        description="Write tools the job may use unattended, as you, e.g. ['remember']; "
        "default none: it only reads. forget, answer_contradiction and request_human_info are never given to a job.",
    )


class ScheduleOnceArgs(Common):
    at: str = Field(
        max_length=40,
        description="ISO date and time in the time zone, e.g. 2026-10-19T09:00; a date "
        "alone means 09:00 that day. It must be in the future.",
    )


class ScheduleJobArgs(Common):
    schedule: str = Field(max_length=120, description=CRON_HELP)


class JobResult(ToolOutput):
    job: JobOut
    message: str

    def to_text(self) -> str:
        return "\n".join([self.message, *self.job.lines()])


@mcp_tool(
    "schedule_once",
    title="Schedule a One-off Job",
    args=ScheduleOnceArgs,
    output=JobResult,
    scope="write",
    feature=FEATURE,
    writes="scoped",
)
def schedule_once_tool(actor: Actor, args: ScheduleOnceArgs) -> JobResult:
    """Schedule a task for one future moment ("remind me in a week to...", "on Friday afternoon
    check whether X landed"). It runs once as this user, reports into a chat, then deletes itself
    (the chat stays). Prefer it to schedule_job whenever the user means once. Work the moment out
    from today's date and pass it as an ISO date and time; write the prompt for a reader with no
    memory of this conversation. Read the schedule back to the user in the words returned."""
    made = services.schedule_once(
        actor=actor,
        name=args.name,
        prompt=args.prompt,
        at=args.at,
        time_zone=args.timezone,
        scope=args.scope,
        mode=args.mode,
        model=args.model,
        memory=args.memory,
        notify=args.notify,
        write_tools=args.write_tools,
    )
    return JobResult(job=shown(made), message=f"Scheduled {made.schedule}.")


@mcp_tool(
    "schedule_job",
    title="Schedule a Recurring Job",
    args=ScheduleJobArgs,
    output=JobResult,
    scope="write",
    feature=FEATURE,
    writes="scoped",
)
def schedule_job_tool(actor: Actor, args: ScheduleJobArgs) -> JobResult:
    """Create a recurring job: a task carried out on a five-field cron schedule with the same
    tools, as this user, each run's report saved to the job's chat ("every morning...", "each
    Friday..."). Write the prompt for a future assistant with no memory of this conversation, and
    read the schedule back to the user in the words returned."""
    made = services.schedule_job(
        actor=actor,
        name=args.name,
        prompt=args.prompt,
        schedule=args.schedule,
        time_zone=args.timezone,
        scope=args.scope,
        mode=args.mode,
        model=args.model,
        memory=args.memory,
        notify=args.notify,
        write_tools=args.write_tools,
    )
    return JobResult(job=shown(made), message=f"Scheduled {made.schedule}.")


class ListJobsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    runs: Annotated[int, Clamped(0, selectors.RUNS_MOST)] = Field(
        selectors.RUNS_LISTED,
        description=f"How many recent runs to list, 0 to {selectors.RUNS_MOST}; default {selectors.RUNS_LISTED}.",
    )


REPORT_CUT = 1500


class RunOut(BaseModel):
    id: str
    job: str = Field(description="The job's name when it ran.")
    job_id: str | None = Field(description="None once the job is gone (a one-off deletes itself after its run).")
    status: str = Field(description="queued, running, ok or failed.")
    scheduled_for: datetime
    finished_at: datetime | None
    report: str = Field(description=f"The run's report, cut at {REPORT_CUT:,} characters; the chat has it whole.")
    chat: str = Field(description="The page of the job's chat, with every report in full.")

    @classmethod
    def of(cls, run: Run) -> RunOut:
        report = run.report if len(run.report) <= REPORT_CUT else run.report[:REPORT_CUT] + "…"
        return cls(
            id=run.public_id,
            job=run.chat.title,
            job_id=run.job.public_id if run.job else None,
            status=run.status,
            scheduled_for=run.scheduled_for,
            finished_at=run.finished_at,
            report=report,
            chat=f"{settings.BRAIN_BASE_URL}/jobs/chats/{run.chat_id}/",
        )

    def lines(self) -> list[str]:
        which = self.job_id or "job deleted"
        head = f"{self.id}: {self.job} ({which}), {self.status}, for {self.scheduled_for:%Y-%m-%d %H:%M} UTC"
        body = [f"  {line}" for line in self.report.splitlines() if line.strip()] or ["  (no report yet)"]
        return [head, *body, f"  chat: {self.chat}"]


class JobsOut(ToolOutput):
    jobs: list[JobOut]
    runs: list[RunOut] = Field(description="Recent runs, newest first, deleted jobs' included.")

    def to_text(self) -> str:
        lines = [f"{len(self.jobs)} job{'' if len(self.jobs) == 1 else 's'}:" if self.jobs else "No jobs."]
        for job in self.jobs:
            lines += job.lines()
        if self.runs:
            lines += ["", f"Recent runs ({len(self.runs)}, newest first):"]
            for run in self.runs:
                lines += run.lines()
        return "\n".join(lines)


@mcp_tool("list_jobs", title="List Scheduled Jobs", args=ListJobsArgs, output=JobsOut, feature=FEATURE)
def list_jobs_tool(actor: Actor, args: ListJobsArgs) -> JobsOut:
    """This user's scheduled jobs and the organisation's shared ones (schedule in words, next and
    last run, the last run's status), then the latest runs with their reports, newest first. The
    runs include those of deleted jobs, so a one-off's report ("remind me...") is found here
    after the one-off is gone; each run links its chat."""
    return JobsOut(
        jobs=[shown(item) for item in services.list_jobs(actor=actor)],
        runs=[RunOut.of(run) for run in selectors.list_runs(actor=actor, limit=args.runs)],
    )


class UpdateJobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(max_length=40, description="The job id list_jobs returns (job_...).")
    name: str | None = Field(None, max_length=120)
    prompt: str | None = Field(None, max_length=8000)
    schedule: str | None = Field(None, max_length=120, description=CRON_HELP)
    timezone: str | None = Field(None, max_length=64)
    enabled: bool | None = Field(None, description="false pauses the job, true resumes it.")
    mode: Literal["agent", "chat"] | None = None
    model: str | None = Field(None, max_length=100)
    memory: Literal["org", "personal", "off"] | None = None
    run_now: bool = Field(False, description="Queue a run within the next minute, on top of the schedule.")
    delete: bool = Field(False, description="Delete the job; its past runs stay in its chat.")
    notify: bool | None = Field(None, description="true mails the user each run's report; false stops it.")


class UpdatedJob(ToolOutput):
    job: JobOut | None
    message: str

    def to_text(self) -> str:
        return "\n".join([self.message, *(self.job.lines() if self.job else [])])


@mcp_tool(
    "update_job",
    title="Update a Scheduled Job",
    args=UpdateJobArgs,
    output=UpdatedJob,
    scope="write",
    feature=FEATURE,
    writes="scoped",
)
def update_job_tool(actor: Actor, args: UpdateJobArgs) -> UpdatedJob:
    """Rename, re-prompt, reschedule, move to another time zone, pause (enabled false), resume,
    run now or delete a job, by the id list_jobs gives. A personal job is changed by its owner; a
    shared one by any member who may write; admins may change every job. Only the owner (and for
    a shared job an admin) changes its prompt, mode, model or memory. A paused job does not run now."""
    changed = services.update_job(
        actor=actor,
        job_id=args.id,
        name=args.name,
        prompt=args.prompt,
        schedule=args.schedule,
        time_zone=args.timezone,
        enabled=args.enabled,
        mode=args.mode,
        model=args.model,
        memory=args.memory,
        run_now=args.run_now,
        delete=args.delete,
        notify=args.notify,
    )
    if changed is None:
        return UpdatedJob(job=None, message=f"Deleted {args.id}; its past runs stay in its chat.")
    queued = " A run is queued within the next minute." if args.run_now else ""
    return UpdatedJob(job=shown(changed), message=f"{changed.job.public_id}: {changed.schedule}.{queued}")
