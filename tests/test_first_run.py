"""The first run's credentials come after every process's start-up lines, set apart from them.

Stand-in processes play the web, the worker and beat through the launcher's real supervisor and
output pump; the health probe is the test's own. The worker says it is ready only when the test
lets it, after the web has answered: credentials printed when the web answered would come above
the worker's start-up lines.
"""

from __future__ import annotations

import http.server
import sys
import threading
from pathlib import Path

from launcher import ready
from launcher.__main__ import print_banner, start_and_announce
from launcher.supervise import Supervisor, pump
from tests.progress import wait_while_progressing

ROOT = Path(__file__).resolve().parent.parent
BANNER = "Brain:        http://brain.test/\nToken:        brn_secret"
WEB = """
import time
print("Uvicorn running on http://127.0.0.1:8000", flush=True)
time.sleep(3600)
"""
# The worker logs its start-up, then says it is ready only once the test lets it (a file appears).
WORKER = """
import os, sys, time
for n in range(30):
    print(f"[INFO/MainProcess] start-up line {n}", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
print("[INFO/MainProcess] celery@fake ready.", flush=True)
time.sleep(3600)
"""
BEAT = """
import time
print("[INFO/MainProcess] beat: Starting...", flush=True)
time.sleep(3600)
"""


class Health(http.server.BaseHTTPRequestHandler):
    answered = 0

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")
        Health.answered += 1

    def log_message(self, *args: object) -> None:
        pass


def test_the_credentials_wait_for_the_worker_after_the_web_answers(capsys, tmp_path):
    go = tmp_path / "worker-may-start"
    commands = {
        "web": [sys.executable, "-c", WEB],
        "worker": [sys.executable, "-c", WORKER, str(go)],
        "beat": [sys.executable, "-c", BEAT],
    }
    startup = ready.StartUp(ready.ready_lines(list(commands)))
    supervisor = Supervisor(commands, env={}, cwd=ROOT, output=pump(threading.Lock(), {}, on_line=startup.saw))
    health = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=health.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{health.server_address[1]}/healthz"
    announce = threading.Thread(
        target=start_and_announce,
        args=(supervisor,),
        kwargs={"startup": startup, "health_url": url, "banner": BANNER, "stopping": lambda: False},
    )
    try:
        announce.start()
        # The web has answered the launcher twice: the credentials would be out by now if it waited
        # for the web alone, and the worker has not said it is ready.
        wait_while_progressing(
            lambda: Health.answered >= 2 or not announce.is_alive(),
            lambda: (Health.answered, startup.lines),
            what="the launcher to ask the web twice",
        )
        assert announce.is_alive(), capsys.readouterr().out
        assert "brn_secret" not in capsys.readouterr().out
        go.touch()
        wait_while_progressing(lambda: not announce.is_alive(), lambda: startup.lines, what="the credentials")
    finally:
        go.touch()
        announce.join(60)
        supervisor.stop_all()
        health.shutdown()
        health.server_close()
    said = capsys.readouterr().out

    assert startup.not_started() == []
    assert "Brain is up." in said
    assert said.index("celery@fake ready.") < said.index("Token:        brn_secret")
    # Set apart: a blank line and a rule between the last log line and the block.
    before = said[: said.index("Brain is up.")].rstrip("\n").splitlines()
    assert before[-1] == "=" * 72
    assert before[-2] == ""


def test_the_start_up_lines_are_told_apart_from_the_rest():
    startup = ready.StartUp(ready.ready_lines(["web", "worker", "worker-bulk", "beat"]))
    assert startup.not_started() == ["worker", "worker-bulk", "beat"]

    startup.saw("web", "INFO: Application startup complete.\n")
    startup.saw("worker", "[INFO/MainProcess] Connected to redis://127.0.0.1:6379/0\n")
    startup.saw("worker-bulk", "[2026-01-05 10:00:00,001: INFO/MainProcess] brain-bulk@host ready.\n")
    startup.saw("beat", "[INFO/MainProcess] beat: Starting...\n")

    assert startup.not_started() == ["worker"]
    assert startup.lines == 4
    startup.saw("worker", "[INFO/MainProcess] brain@host ready.\n")
    assert startup.all_started()


def test_the_block_names_what_has_not_started_when_the_wait_gave_up(capsys):
    print_banner(BANNER, waiting=["web", "worker"])
    said = capsys.readouterr().out
    assert "Not started yet: web, worker. The log above says why." in said
    assert "./brainctl credentials --reset makes a new admin password." in said
