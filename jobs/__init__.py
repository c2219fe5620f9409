"""Scheduled jobs: tasks an assistant sets up for a user that run later as that user, each run's
report saved into the job's chat."""
