"""The Jobs page's form for making and changing a job. It only gathers what a person typed: what
a job may be (limits, schedules, grants, who may change what) is decided by ``jobs.services``,
whose refusals the page shows beside the form."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from django import forms

from jobs.models import Job
from jobs.services import NAME_LIMIT, PROMPT_LIMIT

ONCE, REPEAT = "once", "repeat"
SCHEDULE_EXAMPLES = [
    ("0 9 * * 1-5", "weekdays at 09:00"),
    ("30 17 * * 5", "Fridays at 17:30"),
    ("0 8 * * *", "every day at 08:00"),
    ("0 9 1 * *", "the 1st of each month at 09:00"),
]


def _zones() -> list[tuple[str, str]]:
    names = sorted(z for z in available_timezones() if "/" in z or z == "UTC")
    return [(name, name) for name in names]


class JobForm(forms.Form):
    name = forms.CharField(max_length=NAME_LIMIT, help_text="A short name, e.g. Friday digest of BigCo.")
    prompt = forms.CharField(
        max_length=PROMPT_LIMIT,
        widget=forms.Textarea(attrs={"rows": 6}),
        label="What it should do",
        help_text="Complete instructions, as for a colleague who was not here: names, systems, what the report holds.",
    )
    when = forms.ChoiceField(
        choices=[(ONCE, "Once"), (REPEAT, "On a schedule")], initial=REPEAT, widget=forms.RadioSelect, label="Runs"
    )
    at = forms.CharField(
        required=False,
        max_length=40,
        label="At",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="For a one-off: the date and time, in the time zone below.",
    )
    schedule = forms.CharField(
        required=False,
        max_length=120,
        label="Cron schedule",
        widget=forms.TextInput(attrs={"list": "schedule-examples", "placeholder": "0 9 * * 1-5"}),
        help_text="For a schedule: five cron fields, minute hour day month weekday; "
        + "; ".join(f"{cron} is {words}" for cron, words in SCHEDULE_EXAMPLES)
        + ". The saved job reads it back in words.",
    )
    time_zone = forms.ChoiceField(choices=_zones, label="Time zone")
    scope = forms.ChoiceField(
        choices=[
            (Job.Scope.PERSONAL, "Personal: its reports are yours alone"),
            (Job.Scope.SHARED, "Shared: every member reads its reports and may pause or run it"),
        ],
        widget=forms.RadioSelect,
        initial=Job.Scope.PERSONAL,
    )
    mode = forms.ChoiceField(
        choices=[(Job.Mode.AGENT, "Agent: several steps with the tools"), (Job.Mode.CHAT, "Chat: one reply")],
        initial=Job.Mode.AGENT,
    )
    memory = forms.ChoiceField(
        required=False,
        label="What it learns goes to",
        choices=[
            ("", "Where its scope says (shared memory for a shared job, yours for a personal one)"),
            (Job.Memory.ORG, "The organisation's memory"),
            (Job.Memory.PERSONAL, "Your personal memories"),
            (Job.Memory.OFF, "Nowhere"),
        ],
    )
    write_tools = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Write tools it may use unattended",
        help_text="None by default: it only reads. It writes as you.",
    )
    notify = forms.BooleanField(required=False, label="Also mail me each run's report")

    def __init__(self, *args: Any, grantable: list[str], editing: Job | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        offered = sorted({*grantable, *(editing.write_tools if editing is not None else [])})
        self.fields["write_tools"].choices = [(name, name) for name in offered]  # type: ignore[attr-defined]
        if editing is not None:  # a job's scope is set when it is made
            del self.fields["scope"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("when") == ONCE and not data.get("at"):
            self.add_error("at", "A one-off needs its date and time.")
        if data.get("when") == REPEAT and not data.get("schedule"):
            self.add_error("schedule", "A recurring job needs its five cron fields.")
        return data


def initial_for(job: Job) -> dict[str, Any]:
    """The form filled with what ``job`` is now; a one-off's moment in its own time zone."""
    moment = job.at.astimezone(ZoneInfo(job.time_zone)).strftime("%Y-%m-%dT%H:%M") if job.at else ""
    return {
        "name": job.name,
        "prompt": job.prompt,
        "when": ONCE if job.kind == Job.Kind.ONCE else REPEAT,
        "at": moment,
        "schedule": job.cron,
        "time_zone": job.time_zone,
        "mode": job.mode,
        "memory": job.memory,
        "write_tools": list(job.write_tools),
        "notify": job.notify,
    }
