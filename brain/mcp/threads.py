"""The hop from the event loop to a pool thread, where Django's synchronous code runs.

What ``asgiref.sync.sync_to_async(thread_sensitive=False)`` does for a call (the loop's default
pool, the caller's context variables carried over), without its bookkeeping: under `py-spy
--gil` at ten concurrent calls asgiref's own frames held the interpreter lock for 6% of the
samples, for two hops a call (the token's, the tool's). Django's checks still hold: a pool
thread runs no event loop, so ``async_unsafe`` code may run there.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_pool(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread of the running loop's default pool, with the caller's context."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, contextvars.copy_context().run, fn, *args)
