"""Brain's scheduled jobs, without the database: reading, checking, describing and stepping
schedules in IANA time zones. The rules are stated in ``schedule_cron`` (what a cron may say)
and ``schedule_time`` (how it meets the local clock, daylight-saving changes included)."""

from jobs.schedule_cron import Cron, ScheduleError, check_interval, parse_cron, zone
from jobs.schedule_time import next_run, parse_moment, runs_between
from jobs.schedule_words import describe_cron, describe_moment, describe_next

__all__ = [
    "Cron",
    "ScheduleError",
    "check_interval",
    "describe_cron",
    "describe_moment",
    "describe_next",
    "next_run",
    "parse_cron",
    "parse_moment",
    "runs_between",
    "zone",
]
