"""The embedded store's transactions and its WAL: a write is one SQLite transaction (``BEGIN
IMMEDIATE``: no other writer, in any process, until it commits), or a savepoint inside
``atomic()``; committed pages are copied into the file by a background checkpointer, and deleted
text is scrubbed from the file's bytes (``_scrub``)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .embedded_ann import drop_indexes

log = logging.getLogger(__name__)

_CHECKPOINT_SECONDS = 2.0
SCRUB_WAIT_SECONDS = 2.0  # forget's wait for a reader of an older snapshot; then the checkpointer scrubs


def _truncated(conn: sqlite3.Connection, wait: float) -> bool:
    """Whether the WAL was copied back whole and emptied, readers of older snapshots waited
    for ``wait`` seconds at most."""
    conn.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
    try:
        busy, *_ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute("PRAGMA busy_timeout=30000")
    return busy == 0


class TransactionsMixin:
    """Transactions, checkpoints and scrubbing of ``EmbeddedStore`` (whose state they use)."""

    def _start_checkpointer(self) -> None:
        if self._checkpoint_thread is None and str(self.path) != ":memory:":
            self._closing.clear()
            self._checkpoint_thread = threading.Thread(target=self._checkpointer, name="graphmem-checkpoint", daemon=True)
            self._checkpoint_thread.start()

    def _checkpointer(self) -> None:
        """Copy committed WAL pages into the database file every few seconds after writes. A
        checkpoint changes no data, so it leaves data_version (and every cache) alone."""
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        try:
            while not self._closing.is_set():
                if self._wrote.wait(_CHECKPOINT_SECONDS) and not self._closing.wait(_CHECKPOINT_SECONDS):
                    self._wrote.clear()
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                if self._unscrubbed.is_set() and _truncated(conn, 0.1):
                    self._unscrubbed.clear()
                    log.info("forgotten text is gone from %s now that its last older reader finished", self.path)
        except sqlite3.Error as exc:  # the next write restarts it; a failed checkpoint loses nothing
            log.warning("WAL checkpoint failed: %s", exc)
        finally:
            conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        conn = self._connect()
        cur = conn.cursor()
        if self._atomic is not None:  # inside atomic(): a savepoint, committed with the whole block
            cur.execute("SAVEPOINT put")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK TO put")
                raise
            finally:
                cur.execute("RELEASE put")
            return
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        else:
            cur.execute("COMMIT")
            self._commits += 1
            self._wrote.set()
            self._start_checkpointer()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        with self._lock, self._guard():
            if self._atomic is not None:  # nested: the outer block decides
                yield
                return
            self._sync()
            cur = self._connect().cursor()
            cur.execute("BEGIN IMMEDIATE")  # no other writer, in any process, until the block ends
            self._atomic, self._atomic_owner = set(), threading.get_ident()
            try:
                yield
            except BaseException:
                cur.execute("ROLLBACK")
                # the in-memory indexes and graphs took the block's writes as they went: read them again
                for namespace in self._atomic:
                    drop_indexes(self._vindex, self._ann_root, namespace, files=True)
                    self._graphs.pop(namespace, None)
                    self._decoded.clear(namespace)
                raise
            else:
                cur.execute("COMMIT")
                self._wrote.set()
                self._start_checkpointer()
            finally:
                self._atomic = self._atomic_owner = None
                self._commits += 1

    def _scrub(self) -> None:
        """Deleted text gone from the file as well: the full-text index merged without the
        deleted rows (their terms stay in old segments until a merge), freed pages zeroed
        (secure_delete), the WAL copied back and truncated (it holds the pages as written).
        A reader of an older snapshot (another process, a cursor left open) holds the old pages
        where they are; the copy waits for it ``SCRUB_WAIT_SECONDS`` at most, then is left to
        the checkpointer, which finishes it once that reader lets go (``unscrubbed``, a warning)."""
        with self._tx() as cur:
            cur.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        if _truncated(self.conn, SCRUB_WAIT_SECONDS):
            return
        self._unscrubbed.set()
        log.warning("a reader of %s holds a snapshot older than this forget: the forgotten text stays in the file "
                    "until it finishes, and is scrubbed then", self.path)

    def optimize(self) -> None:
        """The full-text index merged into one segment (FTS5 ``optimize``). Writes leave it in
        a few dozen (24 at 100k memories written in batches of 1,000), and a query looks each
        term up in every one: keyword search then costs ~25 % less CPU, with the same hits and
        scores. Rewrites the whole index (0.4 s at 100k), holding off other writers meanwhile."""
        with self._lock, self._guard(), self._tx() as cur:
            cur.execute("INSERT INTO fts(fts) VALUES ('optimize')")

    def unscrubbed(self) -> bool:
        return self._unscrubbed.is_set()
