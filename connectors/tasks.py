from celery import Task, shared_task

from connectors.sync import due_connections, sync_connection


@shared_task
def sync_due_connections_task() -> int:
    """Beat, every minute: queue a sync of each connection whose time has come."""
    due = due_connections()
    for connection_id in due:
        sync_connection_task.delay(connection_id)
    return len(due)


BUSY_RETRIES = 12  # a minute of asking again; after that the sweep runs it, as its sync is due


@shared_task(bind=True, max_retries=BUSY_RETRIES)
def sync_connection_task(self: Task, connection_id: int) -> str:
    """One sync; when another worker's sync of the connection is running (a webhook came during
    it), asked again every few seconds, so the change it announced arrives in seconds."""
    state = sync_connection(connection_id).state
    if state == "busy" and self.request.retries < BUSY_RETRIES:
        raise self.retry(countdown=5)
    return state
