"""Hostile uploads against the running parts of Brain: does the web keep answering, and does
another organisation's short note still become searchable soon?

    .venv/bin/python -m bench.hostile [--pdfs 20] [--mbox 2000] [--long 3] [--notes 10]

Starts the web server and the workers exactly as ``./brainctl run`` does (launcher.processes:
one worker on every queue but the bulk lane, one on the bulk lane), then, as organisation A:

- one form with a mailbox of ``--mbox`` messages and one of 1,000 (the most one file may make);
- one form of ``--pdfs`` PDFs of 20 pages that all draw one 5 MB content stream (18 KB each);
- ``--long`` documents of 2,000,000 characters through the REST API (the most one may hold).

Then organisation B saves ``--notes`` short notes through the REST API. Meanwhile a probe asks
for the login page every quarter second. Prints how long each request took, the slowest and
95th-percentile page while the load ran, when B's notes were all ready, what became of A's
files, and the workers' peak resident memory. A's leftovers are paused and the queues emptied
at the end, so the next run starts clean.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import threading
import time
from typing import Any

import httpx
import psutil

from bench.hostile_files import mbox, shared_stream_pdf
from bench.ingest import rss_mb
from bench.mcp_calls import ROOT, percentile, setup_environment

PASSWORD = "a long enough secret for the bench"  # noqa: S105 -- a throwaway user of the bench


class Probe(threading.Thread):
    """Asks the web for a page every quarter second and keeps how long each answer took."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.stopped = url, threading.Event()
        self.times: list[float] = []

    def run(self) -> None:
        with httpx.Client(timeout=60) as client:
            while not self.stopped.is_set():
                started = time.perf_counter()
                with contextlib.suppress(httpx.HTTPError):
                    client.get(self.url)
                self.times.append(time.perf_counter() - started)
                self.stopped.wait(0.25)


class PeakMemory(threading.Thread):
    def __init__(self, pids: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.pids, self.peak, self.stopped = pids, dict.fromkeys(pids, 0.0), threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            for name, pid in self.pids.items():
                with contextlib.suppress(psutil.NoSuchProcess):
                    self.peak[name] = max(self.peak[name], rss_mb(psutil.Process(pid)))
            self.stopped.wait(0.5)


def say(what: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {what}", flush=True)


def expect(ok: object, what: str) -> None:
    if not ok:
        raise SystemExit(f"the bench stopped: {what}")


def logged_in(base: str, username: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=600, follow_redirects=False)
    page = client.get("/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    expect(token, "no login form")
    client.post("/login/", data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token[1]})  # type: ignore[index]
    return client


def upload(client: httpx.Client, org: str, files: list[tuple[str, bytes]]) -> float:
    page = client.get(f"/knowledge/add/?org={org}").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    expect(token, "not logged in")
    started = time.perf_counter()
    answer = client.post(
        f"/knowledge/add/?org={org}",
        data={"kind": "files", "csrfmiddlewaretoken": token[1], "scope": "shared"},  # type: ignore[index]
        files=[("files", (name, data)) for name, data in files],
        headers={"Referer": str(client.base_url)},
    )
    expect(answer.status_code == 302, answer.text[:500])
    return time.perf_counter() - started


def main() -> None:  # noqa: PLR0915 -- one scenario, told in order
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=int, default=20)
    parser.add_argument("--mbox", type=int, default=2000)
    parser.add_argument("--long", type=int, default=3)
    parser.add_argument("--notes", type=int, default=10)
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--wait", type=float, default=600, help="seconds to wait for B's notes at most")
    args = parser.parse_args()
    env = setup_environment()
    from launcher import processes

    for step in (processes.MIGRATE, processes.COLLECTSTATIC):  # as ./brainctl run does first
        subprocess.run(processes.manage_command(step), cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from bench.corpus import bench_org
    from brain.celery import app
    from brain.core.services import create_token
    from memory.documents.ingestion import pause_ingestion
    from memory.models import Document, Upload

    def clear_leftovers() -> None:
        """Earlier runs' hostile files and documents neither wait in the queues nor take turns."""
        Upload.objects.filter(org__slug__startswith="hostile-", status__in=["queued", "processing"]).update(
            status="failed", error="left by an earlier run of the bench"
        )
        Document.objects.filter(org__slug__startswith="hostile-", status__in=["queued", "processing"]).update(
            status="failed", error="left by an earlier run of the bench"
        )
        with app.connection_for_write() as connection:
            for queue in processes.QUEUES:
                with contextlib.suppress(Exception):  # a queue no message was ever sent to
                    connection.default_channel.queue_purge(queue)

    clear_leftovers()
    stamp = int(time.time())
    hostile, hostile_actor = bench_org(f"hostile-{stamp}")
    victim, victim_actor = bench_org(f"victim-{stamp}")
    hostile_actor.user.set_password(PASSWORD)
    hostile_actor.user.save()
    base = f"http://127.0.0.1:{args.port}"
    commands = processes.local_commands(host="127.0.0.1", port=args.port, access_log=False)
    started_parts = {
        name: subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, command in commands.items()
        if name != "beat"
    }
    try:
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/login/", timeout=10).status_code == 200:
                    break
            time.sleep(0.2)
        while len(app.control.broadcast("ping", reply=True, timeout=1)) < 2:
            time.sleep(0.5)
        say("web and workers answer")
        memory = PeakMemory({n: p.pid for n, p in started_parts.items() if n != "web"})
        memory.start()
        probe = Probe(f"{base}/login/")
        probe.start()
        load_started = time.perf_counter()
        browser = logged_in(base, hostile_actor.user.username)
        say("logged in as A")
        pdf = shared_stream_pdf(pages=20, stream_bytes=5_000_000)
        timings: dict[str, float] = {}
        timings[f"mailboxes of {args.mbox:,} and 1,000 messages, one form"] = upload(
            browser, hostile.slug, [("everything.mbox", mbox(messages=args.mbox)), ("team.mbox", mbox(messages=1000))]
        )
        timings[f"{args.pdfs} shared-stream PDFs ({len(pdf) // 1024} KB each), one form"] = upload(
            browser, hostile.slug, [(f"report-{n}.pdf", pdf) for n in range(args.pdfs)]
        )
        say("A's files sent")
        hostile_token = create_token(org=hostile, user=hostile_actor.user, scopes=["read", "write"], name="b").plaintext
        api = httpx.Client(base_url=base, timeout=600, headers={"Authorization": f"Bearer {hostile_token}"})
        book = ("All work and no play makes a long document. " * 50 + "\n\n") * 900
        book = book[:2_000_000]  # the most one document may hold
        for n in range(args.long):
            started = time.perf_counter()
            saved = api.post("/api/v1/documents", json={"title": f"Book {n}", "content": book})
            expect(saved.status_code == 201, saved.text[:300])
            timings[f"REST document {n + 1} of 2,000,000 characters"] = time.perf_counter() - started
        say("A's long documents sent")
        team = Upload.objects.filter(org=hostile, name="team.mbox")
        while team.filter(status__in=["queued", "processing"]).exists() and time.perf_counter() - load_started < 300:
            time.sleep(0.5)  # B comes after A's thousand messages are queued ahead of it
        say(f"A's mailbox read: {Document.objects.filter(org=hostile, status='queued').count()} of A's queued")
        victim_token = create_token(org=victim, user=victim_actor.user, scopes=["read", "write"], name="b").plaintext
        victim_api = httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {victim_token}"})
        notes_started = time.perf_counter()
        for n in range(args.notes):
            note = {"title": f"Note {n}", "content": f"The standup on day {n} moved to 9:30 in room {n}."}
            expect(victim_api.post("/api/v1/documents", json=note).status_code == 201, "a note was refused")
        say("B's notes sent")
        notes = Document.objects.filter(org=victim)
        while (
            notes.exclude(status__in=["ready", "failed"]).exists() and time.perf_counter() - notes_started < args.wait
        ):
            time.sleep(0.5)
        notes_seconds = time.perf_counter() - notes_started
        notes_ready = notes.filter(status="ready").count()
        files = Upload.objects.filter(org=hostile, status__in=["queued", "processing"])
        while files.exists() and time.perf_counter() - notes_started < args.wait:
            time.sleep(1)  # what became of A's files, within the same wait
        probe.stopped.set()
        memory.stopped.set()
        for what, seconds in timings.items():
            print(f"request: {what}: {seconds:.2f} s")
        print(
            f"web page while loaded: {len(probe.times)} answers, slowest {max(probe.times):.2f} s, "
            f"p95 {percentile(probe.times, 95):.2f} s, median {percentile(probe.times, 50):.2f} s"
        )
        print(f"B's {args.notes} notes: {notes_ready} ready {notes_seconds:.1f} s after the first was sent")
        print(f"whole run so far: {time.perf_counter() - load_started:.1f} s")
        uploads: dict[tuple[str, str], int] = {}
        for upload_row in Upload.objects.filter(org=hostile):
            key = (upload_row.status, upload_row.error[:110])
            uploads[key] = uploads.get(key, 0) + 1
        for (status, error), count in sorted(uploads.items()):
            print(f"A's files: {count} {status}" + (f": {error}" if error else ""))
        states: dict[str, Any] = dict.fromkeys(["queued", "processing", "ready", "failed"], 0)
        for status in Document.objects.filter(org=hostile).values_list("status", flat=True):
            states[status] = states.get(status, 0) + 1
        print(f"A's documents: {states}")
        for name, peak in memory.peak.items():
            print(f"peak resident memory, {name} (main + children): {peak:.0f} MB")
    finally:
        pause_ingestion(actor=None, org=hostile)
        clear_leftovers()
        for part in started_parts.values():
            part.terminate()
        for part in started_parts.values():
            try:
                part.wait(30)
            except subprocess.TimeoutExpired:
                part.kill()


if __name__ == "__main__":
    main()
