import logging
import os
from datetime import UTC, datetime
from typing import Any

from celery import Celery, bootsteps, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "brain.settings")

app = Celery("brain")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
logger = logging.getLogger("brain.recovery")


class RecoverOnConnect(bootsteps.StartStopStep):
    """Each time the worker (re)connects to the broker, run the recovery sweeps at once.

    Messages wait in the outbox while the broker is away, and are lost when it restarts; a worker
    that died leaves its documents claimed. Sweeping on connect resumes that work as soon as
    the broker or the worker is back, instead of at the next beat sweep after a grace period.
    Sweeps are safe to run any number of times: every task claims its row first.
    """

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.started_at = datetime.now(UTC)
        self.connected_before = False

    def start(self, parent: Any) -> None:
        try:
            if not self.connected_before:
                parent.app.send_task(
                    "memory.tasks.recover_worker_task", args=[parent.hostname, self.started_at.isoformat()]
                )
            parent.app.send_task("brain.tasks.send_outbox_task")
            parent.app.send_task("memory.tasks.sweep_stuck_documents_task", kwargs={"queued_grace_seconds": 0})
            parent.app.send_task("contacts.tasks.sweep_queued_requests_task", kwargs={"grace_seconds": 0})
            parent.app.send_task("jobs.tasks.sweep_jobs_task", kwargs={"grace_seconds": 0})
        except Exception:  # the broker went away again: the next connection sweeps
            logger.warning("could not queue the recovery sweeps", exc_info=True)
            return
        self.connected_before = True


app.steps["consumer"].add(RecoverOnConnect)


def use_the_projects_logging(**_: Any) -> None:
    """With JSON logs, the worker and beat log through Django's LOGGING (brain.infra.logs) instead
    of Celery's own format; connecting this signal is how Celery leaves logging alone."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)  # a warning is a log line too, not a line of its own on stderr


# Read from the environment as the settings read it: the settings are not loaded yet here. Until
# they are, JSON lines already: the worker warns (running as root, say) before it sets up logging.
if os.environ.get("BRAIN_LOG_FORMAT", "").strip().lower() == "json":
    from brain.infra.logs import log_json_lines

    log_json_lines()
    signals.setup_logging.connect(use_the_projects_logging, weak=False)


def _connect_signals() -> None:
    from brain.infra import logs, metrics

    logs.connect_task_signals()
    metrics.connect_task_signals()


_connect_signals()
