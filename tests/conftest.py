"""A real Brain ASGI server on loopback (uvicorn in a thread) and a real MCP client for it."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx2
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from launcher.processes import EVENT_LOOP, HTTP_PARSER
from tests.progress import wait_until

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def brain_url(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """Serve brain.asgi on a free port for the whole session; tests using it need transactional_db."""
    with django_db_blocker.unblock():
        from brain.asgi import application

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            application,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="on",
            http=HTTP_PARSER,
            loop=EVENT_LOOP,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), what="the test server to start")
    if not server.started:
        raise RuntimeError("the test server stopped before it started serving")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@asynccontextmanager
async def mcp_session(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def run_mcp(url: str, token: str, fn: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Open a session, run ``fn`` with it, close it; from synchronous tests."""

    async def main() -> T:
        async with mcp_session(url, token) as session:
            return await fn(session)

    # A thread of its own, so callers that already run an event loop (Playwright) can use it too.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()


def call(url: str, token: str, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    return run_mcp(url, token, lambda s: s.call_tool(tool, arguments or {}))


class McpCaller:
    """One real MCP client session on its own event loop thread, for synchronous callers.

    The session lives in a single task (anyio scopes must close in the task that opened them);
    requests reach it through a queue, and each answer comes back through a future.
    """

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[Callable[[ClientSession], Awaitable[Any]], Future[Any]] | None] | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    async def _serve(self) -> None:
        self._loop, self._queue = asyncio.get_running_loop(), asyncio.Queue()
        async with mcp_session(self.url, self.token) as session:
            self._ready.set()
            while (item := await self._queue.get()) is not None:
                request, answer = item
                try:
                    answer.set_result(await request(session))
                except Exception as exc:  # handed to the caller, who decides what it means
                    answer.set_exception(exc)

    def __enter__(self) -> McpCaller:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the MCP session did not open")
        return self

    def run(self, request: Callable[[ClientSession], Awaitable[T]]) -> T:
        assert self._loop is not None
        assert self._queue is not None
        answer: Future[T] = Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (request, answer))
        return answer.result(timeout=120)

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        return self.run(lambda session: session.call_tool(tool, arguments))

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._queue is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        self._thread.join(30)
