"""While an ingest command runs, what the file readers and the ingestion pipeline log goes to a
file (``BRAIN_DATA_DIR/logs/ingest.log``) instead of between the command's progress bars and its
summary. The command reports each failure itself, one line each, and says where the details are.

The loggers: pypdf reports every repair it makes to a damaged PDF; Python warnings (BeautifulSoup's
among them) arrive through ``py.warnings``; ``brain.ingest`` logs each failed document with its
traceback when ``--wait`` ingests in the command's own process.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

QUIET_LOGGERS = ("pypdf", "py.warnings", "brain.ingest")


@dataclass
class CommandLog:
    path: Path
    count: int = 0  # records written while the command ran


class _Counter(logging.Handler):
    def __init__(self, log: CommandLog) -> None:
        super().__init__(logging.NOTSET)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.log.count += 1


def command_log_path() -> Path:
    return Path(settings.DATA_DIR) / "logs" / "ingest.log"


@contextmanager
def logged_to_file(path: Path | None = None) -> Iterator[CommandLog]:
    """Inside it, the ``QUIET_LOGGERS`` write to the log file only. Where that file cannot be
    written, they go on to the terminal as before."""
    log = CommandLog(path or command_log_path())
    with suppress(OSError):
        log.path.parent.mkdir(parents=True, exist_ok=True)
    if not os.access(log.path.parent, os.W_OK) or (log.path.exists() and not os.access(log.path, os.W_OK)):
        yield log
        return
    to_file = logging.FileHandler(log.path, delay=True, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    counter = _Counter(log)
    logging.captureWarnings(True)  # Django does this when it sets up logging; a bare call may not have
    saved = []
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.addHandler(to_file)
        logger.addHandler(counter)
        logger.propagate = False
    try:
        yield log
    finally:
        for logger, propagate in saved:
            logger.removeHandler(to_file)
            logger.removeHandler(counter)
            logger.propagate = propagate
        to_file.close()
