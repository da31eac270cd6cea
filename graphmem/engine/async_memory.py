"""``AsyncMemory``: ``Memory`` for asyncio applications. Every public method of ``Memory`` is
here, awaitable, generated from it (one implementation: no second copy of any method body):
each call runs the sync core in a worker thread of the instance's own pool, so the event loop
never blocks on the store, the embedder or the model. ``Memory`` is safe to share between
threads (its writes are conditional and serialised where they must be), so many awaits may be
in flight at once.

    async with await AsyncMemory.open("graphmem.db") as mem:
        await mem.add_messages("s1", ["I prefer green tea"])
        hits = await mem.recall("what does the user drink?")
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .memory import Memory


class AsyncMemory:
    """The awaitable face of one ``Memory``: ``AsyncMemory(path, settings=..., ...)`` takes what
    ``Memory`` takes (``max_workers`` sizes the thread pool, 8 by default). Opening loads the
    embedder; ``await AsyncMemory.open(...)`` does that off the event loop. ``memory=`` wraps a
    ``Memory`` you have; ``.memory`` is the sync one underneath (``settings`` and the like)."""

    def __init__(self, *args: Any, max_workers: int = 8, memory: Memory | None = None, **kwargs: Any) -> None:
        self.memory = memory if memory is not None else Memory(*args, **kwargs)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="graphmem-async")

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> AsyncMemory:
        return await asyncio.to_thread(cls, *args, **kwargs)

    async def close(self) -> None:
        """Wait for the calls in flight, then close the ``Memory`` (off the event loop)."""
        await asyncio.to_thread(self._pool.shutdown, wait=True)
        await asyncio.to_thread(self.memory.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))


def _awaitable(name: str, fn: Any) -> Any:
    @functools.wraps(fn)
    async def method(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await self._call(fn, self.memory, *args, **kwargs)

    method.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return method


PUBLIC = sorted(n for n in dir(Memory)  # its mixins' (sessions, entities) too
                if not n.startswith("_") and n != "close" and inspect.isfunction(inspect.getattr_static(Memory, n)))
for _name in PUBLIC:
    setattr(AsyncMemory, _name, _awaitable(_name, getattr(Memory, _name)))
