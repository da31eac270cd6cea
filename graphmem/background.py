"""One background thread per kind of deferred work, with the store as its durable queue."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from .errors import GraphMemError

log = logging.getLogger(__name__)


class BackgroundWorker:
    """Runs ``next_job()``/``run_job()`` in a daemon thread while there is work. ``mode``
    "background" runs it in the thread, "manual" only in ``flush()`` in the caller's
    thread, "off" never. A failure stops the thread and is raised by the next ``flush()``;
    the unfinished work stays queued in the store."""

    label = "work"

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self.error: BaseException | None = None

    # to implement -------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        raise NotImplementedError

    def next_job(self, final: bool) -> Any | None:
        """The next piece of work, or None; ``final`` asks for partial work too."""
        raise NotImplementedError

    def run_job(self, job: Any) -> None:
        raise NotImplementedError

    def waiting(self) -> bool:
        """Whether work is queued that another process holds now (after ``next_job`` found
        none to take): the worker looks again every ``poll_seconds`` instead of going idle."""
        return False

    @property
    def poll_seconds(self) -> float:
        return 1.0

    def next_or_wait(self, final: bool, *args: Any) -> Any | None:
        """``next_job``, waiting (every ``poll_seconds``) while the only work left is held by
        another process: None once nothing is queued, by anyone."""
        while (job := self.next_job(final, *args)) is None and self.waiting():
            time.sleep(self.poll_seconds)
        return job

    # shared -------------------------------------------------------------------------------
    def kick(self) -> None:
        """Start the thread if needed and tell it there is work (background mode only)."""
        if self.mode != "background":
            return
        with self._guard:
            self._idle.clear()
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._stop = False
                self._thread = threading.Thread(target=self._run, name=f"graphmem-{self.label}", daemon=True)
                self._thread.start()

    def flush(self, timeout: float | None = None) -> None:
        """Do or wait for every queued job, partial ones included; re-raise a thread's failure."""
        if self.mode == "off":
            return
        if self.mode == "manual":
            while (job := self.next_or_wait(True)) is not None:
                self.run_job(job)
            return
        self._final = True
        self.kick()
        if not self._idle.wait(timeout):
            raise TimeoutError(f"background {self.label} did not finish in time")
        if self.error is not None:
            err, self.error = self.error, None
            raise GraphMemError(f"background {self.label} failed: {err}") from err

    def close(self) -> None:
        """Stop after the job in hand; the rest stays queued in the store."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    _final = False

    def _run(self) -> None:
        while not self._stop:
            self._wake.clear()
            try:
                job = self.next_job(self._final)
                if job is None and self.waiting():  # another process holds the rest: look again soon
                    self._wake.wait(self.poll_seconds)
                    continue
                if job is None:
                    self._final = False
                    self._idle.set()
                    if self._wake.wait(1.0) or self._stop:
                        continue
                    with self._guard:  # exit, unless a kick came in meanwhile
                        if not self._wake.is_set():
                            self._thread = None
                            return
                    continue
                self.run_job(job)
            except BaseException as exc:  # noqa: BLE001 - handed to flush(), never swallowed
                log.exception("background %s failed", self.label)
                self.error = exc
                with self._guard:
                    self._thread = None
                self._idle.set()
                return
        self._idle.set()
