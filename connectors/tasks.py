from celery import shared_task

from connectors.sync import due_connections, sync_connection


@shared_task
def sync_due_connections_task() -> int:
    """Beat, every minute: queue a sync of each connection whose time has come."""
    due = due_connections()
    for connection_id in due:
        sync_connection_task.delay(connection_id)
    return len(due)


@shared_task
def sync_connection_task(connection_id: int) -> str:
    return sync_connection(connection_id).state
