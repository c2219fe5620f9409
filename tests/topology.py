"""Brain laid out as a deployment on one machine: web processes, a worker per queue, one beat, the
test database reached over TCP and Redis; a round-robin client; a loopback stand-in for Slack.

The embedded PostgreSQL listens on a unix socket only. ``TcpToSocket`` gives it a loopback TCP
port that forwards every connection to that socket, so each process of the topology talks to the
database over TCP as it would to another machine, without reconfiguring the shared cluster.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from launcher.processes import PROCESS_ENV, beat_command, web_command, worker_command

ROOT = Path(__file__).resolve().parent.parent


class TcpToSocket:
    """A loopback TCP port whose connections are piped to a unix socket, on a thread of its own."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._pipe, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._started.set()
        self._loop.run_forever()
        server.close()

    async def _pipe(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_unix_connection(self.socket_path)

        async def copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        await asyncio.gather(copy(client_reader, server_writer), copy(server_reader, client_writer))

    def __enter__(self) -> TcpToSocket:
        self._thread.start()
        self._started.wait(10)
        return self

    async def _close(self) -> None:
        """Cancel the pipes still open (connections kept for reuse), so each closes its sockets
        while the loop still runs."""
        pipes = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in pipes:
            task.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@dataclass
class Topology:
    """The processes started, by name; each in a process group of its own so a kill takes its children."""

    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        self.procs[name] = proc
        return proc

    def web(self, name: str, port: int) -> None:
        self.start(name, web_command(host="127.0.0.1", port=port, access_log=False))

    def worker(self, name: str, queues: tuple[str, ...], concurrency: int = 1) -> None:
        self.start(name, worker_command(queues=queues, concurrency=concurrency, name=f"{name}@%h"))

    def beat(self) -> None:
        self.start("beat", [*beat_command(), "--max-interval", "2", "-s", str(self.logs / "beat-schedule")])

    def kill(self, name: str) -> None:
        """SIGKILL the process and its children at once, as the kernel's OOM killer or a lost host would."""
        proc = self.procs[name]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]

    def log_path(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def topology_env(*, database_url: str, redis_url: str, data_dir: Path, base_url: str) -> dict[str, str]:
    """What every process of the topology runs with: one database, one Redis, one secret, one base URL;
    a short ingestion lease and sweep so a killed worker's documents come back within the test."""
    return dict(
        os.environ,
        **PROCESS_ENV,
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        BRAIN_DATA_DIR=str(data_dir),
        SECRET_KEY="topology-test-secret-the-same-in-every-process",
        BRAIN_BASE_URL=base_url,
        BRAIN_EMBED_THREADS="1",
        BRAIN_INGEST_LEASE_SECONDS="30",
        BRAIN_SWEEP_INTERVAL_SECONDS="3",
        BRAIN_QUEUED_GRACE_SECONDS="20",
    )


def ready(url: str) -> bool:
    """Whether the web process answers ``/readyz`` (the first call loads its embedding model)."""
    try:
        return httpx.get(f"{url}/readyz", timeout=60).status_code == 200
    except httpx.HTTPError:
        return False


class RoundRobin:
    """Sends each request to the next web process; a request that fails (no connection, a dropped
    connection, a 5xx) is sent once more to the other one. Records what happened to every request."""

    def __init__(self, urls: list[str], token: str) -> None:
        self.urls = urls
        self._next = itertools.count()
        self._lock = threading.Lock()
        self._local = threading.local()
        self.headers = {"Authorization": f"Bearer {token}"}
        self.retried = 0
        self.failed: list[str] = []

    def _client(self) -> httpx.Client:
        if not hasattr(self._local, "client"):
            self._local.client = httpx.Client(headers=self.headers, timeout=60)
        return self._local.client

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response | None:
        with self._lock:
            first = next(self._next) % len(self.urls)
        second = (first + 1) % len(self.urls)
        for attempt, index in enumerate((first, second)):
            try:
                response = self._client().post(self.urls[index] + path, json=body)
                if response.status_code < 500:
                    return response
                problem = f"HTTP {response.status_code}: {response.text[:200]}"
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt == 0:
                with self._lock:
                    self.retried += 1
        with self._lock:
            self.failed.append(f"{path} {problem}")
        return None


class SlackStub:
    """An incoming-webhook stand-in on loopback that counts each message it is given, by path."""

    def __init__(self) -> None:
        deliveries: list[str] = []
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with lock:
                    deliveries.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.deliveries = deliveries
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> SlackStub:
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
