"""``Memory``: the one synchronous facade. It validates at the edge, takes the write lock and
hands the work to the parts that do it (``graphmem.lifecycle`` builders and workers,
``graphmem.retrieve``); it holds no domain logic of its own."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from ..embed import Embedder, embed_beside, embedder_for, freeze_heap, limit_blas, make_embedder
from ..errors import ConfigurationError, NotFoundError, ValidationError
from ..extract.extractors import Extractor
from ..lifecycle import (
    GraphBuilder, LogLinker, Maintainer, Parts, Reembedder, append_turns, check, checked_namespace, corrected_triple,
    drop_unwritten, export, forget_records, import_, message_inputs, owned, scope_filter, scoped_ids, written_by,
)
from ..models import (
    LAYERS, NODE_TYPES, Context, Episode, History, Layer, MemoryIn, MemoryPatch,
    MemoryRecord, Message, MessageIn, Neighbourhood, Node, NodeKind, Procedure, ScoredItem, Session, Status,
    check_vector, utcnow,
)
from ..models.fields import LongStr, SESSION_ID
from ..retrieve import Recaller, RecallResult, assemble, find_entity, history, neighbourhood
from ..settings import RecallFilter, RecallOptions, Settings
from ..store import Store, no_vectors, open_store
from ..text import ApproxTokenCounter, EntityTagger, TokenCounter
from .enrich import Enricher
from ..lifecycle.builders import scope_of
from .guard import guarded, retried, whole
from .extraction import ExtractionWorker
from .entities import EntitiesMixin
from .lifecycle import LifecycleMixin, Progress
from .procedural import ProceduralMixin
from .sessions import SessionsMixin

log = logging.getLogger(__name__)

_LONG_TEXT = TypeAdapter(LongStr)
_COUNTED = ("memory", "message", "episode", "entity", "session", "procedure", "trace")  # in stats, 0 when none


@guarded
class Memory(SessionsMixin, EntitiesMixin, ProceduralMixin, LifecycleMixin):
    """graphmem's Python API. ``Memory(path)`` opens (or creates) an embedded store file;
    ``Memory()`` and ``Memory.from_settings()`` use the ``GRAPHMEM_*`` settings (the backend
    included: ``GRAPHMEM_BACKEND=neo4j``); ``store=`` takes any Store. Every method takes
    ``namespace=`` (the tenant, default ``"default"``) and never reads outside it.

    A store embedded with another model than the configured one opens with the stored model
    (recall keeps working) and is re-embedded by ``reembed()`` or the next ``maintain()``."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        token_counter: TokenCounter | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        settings = settings or Settings()
        if path is not None:
            settings = settings.model_copy(update={"path": Path(path), "backend": "embedded"})
        self.settings = settings
        if settings.blas_threads:  # asked for: it acts on the whole process
            limit_blas(settings.blas_threads)
        self._freeze = settings.gc_freeze  # done after the first recall, when the models have loaded
        configured = embedder or make_embedder(settings.embedder, settings.cache_dir)
        store = store or open_store(settings)
        live = configured
        bound = store.bound_embedder()
        if bound is not None and bound != (configured.name, configured.dim):
            live = embedder_for(bound[0], bound[1], settings.cache_dir)  # ConfigurationError when graphmem cannot make it
            log.warning("the store holds %s vectors; the configured embedder is %s: recall uses the stored model "
                        "until `graphmem reembed` (or maintain) re-embeds everything", bound[0], configured.name)
        store.init(embedder=live.name, dim=live.dim)
        self._wanted_embedder = configured if live is not configured else None
        self._parts = Parts(store=store, embedder=live, tagger=EntityTagger(), settings=settings)
        self._builder = GraphBuilder(self._parts)
        self._linker = LogLinker(self._parts)
        self.counter = token_counter or ApproxTokenCounter()
        self.recaller = Recaller(store, live)
        self._enricher = Enricher(self._parts)
        if store.pending_vectors("message", 1):  # left by a process that stopped before embedding them
            self._enricher.kick()
        self._extraction = ExtractionWorker(self._parts, self._builder, extractor)
        self._maintainer = Maintainer(self._parts)
        self._reembedder = Reembedder(self._parts, on_swap=self._use_embedder)
        self._start_procedural()

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> "Memory":
        try:
            settings = settings or Settings(**overrides)
        except PydanticValidationError as exc:
            raise ConfigurationError(f"invalid settings: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
        return cls(settings=settings)

    @property
    def store(self) -> Store:
        return self._parts.store

    @property
    def embedder(self) -> Embedder:
        """The model recall and writes use now (the store's, until a re-embedding swaps it)."""
        return self._parts.embedder

    @property
    def tagger(self) -> EntityTagger:
        return self._parts.tagger

    def _use_embedder(self, embedder: Embedder) -> None:
        self._parts.embedder = embedder
        self.recaller.embedder = embedder
        if self._wanted_embedder is not None and self._wanted_embedder.name == embedder.name:
            self._wanted_embedder = None

    def close(self) -> None:
        """Stop background work (pending enrichment, extraction and re-embedding stay queued in
        the store) and close the store."""
        self._reembedder.close()
        self._extraction.close()
        self._enricher.close()
        self.recaller.close()
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # background work ----------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> None:
        """Wait until every message is embedded and tagged and every window, the last partial
        one of each session included, is extracted (unless extraction is off)."""
        self._enricher.flush(timeout)
        self._extraction.flush(timeout)

    def extract(self, *, namespace: str | None = None, progress: Progress | None = None) -> list[dict[str, Any]]:
        """Extract every pending window (the last partial ones included) in the calling thread,
        whatever the extraction mode; returns one report per window (added, merged,
        superseded, seconds, tokens)."""
        namespace = checked_namespace(namespace) if namespace else None
        before = len(self._extraction.counters.log)
        self._extraction.run_pending(final=True, namespace=namespace, progress=progress)
        return self._extraction.counters.log[before:]

    @property
    def extractor_name(self) -> str:
        """The extractor in use (``llama.cpp:<model file>`` or ``openai:<model>``)."""
        return self._extraction.extractor.name

    def extraction_status(self, *, namespace: str | None = None) -> dict[str, Any]:
        """Windows queued, done, skipped and failed (from the store), and what extraction cost
        in this process: model calls, seconds, prompt and output tokens."""
        return self._extraction.status(checked_namespace(namespace) if namespace else None)

    def retry_failed(self, *, namespace: str | None = None) -> int:
        """Run failed windows again, in the calling thread; returns how many were retried."""
        return self._extraction.retry_failed(checked_namespace(namespace) if namespace else None)

    def pending(self) -> int:
        """Messages stored but not yet embedded (written with ``wait=False``)."""
        return len(self.store.pending_vectors("message", 100_000))

    @contextmanager
    def _op(self, name: str, namespace: str, **fields: Any) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        log.info("%s namespace=%s %s in %.1f ms", name, namespace, extra, (time.perf_counter() - t0) * 1000)

    # writes -----------------------------------------------------------------------------
    def add_messages(
        self,
        session_id: str,
        messages: Sequence[MessageIn | dict | str],
        *,
        namespace: str = "default",
        wait: bool = True,
    ) -> list[Message]:
        """Append turns to a session's log: durable at once, embedded and tagged with
        entities and keywords so that recall finds them immediately, before any LLM.

        ``wait=False`` is for bulk ingestion: messages are durable and keyword-searchable
        on return, and a background thread embeds and tags them (``flush()`` waits)."""
        namespace = checked_namespace(namespace)
        session_id = check(SESSION_ID, session_id, "session_id")
        inputs = message_inputs(messages, self.settings.max_batch)
        texts = [m.said for m in inputs]
        if wait:  # embedded and tagged before the write lock: readers go on, a retried write does not redo it
            embedded = embed_beside(self.embedder, texts)
            tags, vectors = self.tagger.tag_many(texts), embedded.result()

        def write() -> tuple[Session, list[Message]]:
            with self._parts.write_lock, self._op("add_messages", namespace, count=len(inputs)):
                now = utcnow()
                stored = next(iter(self.store.get(namespace, [session_id])), None)
                if stored is not None and not isinstance(stored, Session):
                    raise ValidationError(f"id {session_id!r} is taken by a {stored.kind} in this namespace")
                expect = {session_id: stored.updated_at if stored else None}  # no other writer appended meanwhile
                owner = scope_of(None, inputs)  # a new session: the user and agent its turns agree on
                session = stored or check(Session, {"id": session_id, "namespace": namespace, "created_at": now,
                                                    "user_id": owner["user_id"], "agent_id": owner["agent_id"]},
                                          "session_id")
                seen = {n.id for n in self.store.get(namespace, [m.id for m in inputs if m.id])}
                todo = [i for i, m in enumerate(inputs) if m.id not in seen]  # a known id again is a no-op
                if not todo:
                    return session, []
                records, edges = append_turns(session, [inputs[i] for i in todo], now)
                if not wait:
                    self.store.put(namespace, [session, *records], edges=edges, expect=expect)
                    return session, records
                # speakers and mentions now (with wait=False the enrichment thread links them);
                # the session has no vector
                linked = self._linker.link(namespace, records, [tags[i] for i in todo], now)
                nodes, rows = linked.rows(vectors[todo])
                self.store.put(namespace, [session, *nodes], np.vstack([no_vectors(1, self.embedder.dim), rows]),
                               [*edges, *linked.edges], expect=expect)
                return session, linked.messages

        session, records = retried(write)
        if not records:
            return []
        if not wait:
            self._enricher.kick()
        if session.next_seq - session.extracted_upto >= self.settings.extract_every:
            self._extraction.kick()
        return records

    def remember(self, text: str, *, namespace: str = "default", **fields: Any) -> MemoryRecord:
        """Write one memory explicitly, with its entities (given, or found in the text) and
        relations. ``fields`` are those of ``MemoryIn``: subject, predicate, object, category,
        importance, confidence, source, pinned, entities, relations, valid_at, source_message_ids..."""
        return self.remember_many([{"text": text, **fields}], namespace=namespace)[0]

    def remember_many(self, memories: Sequence[MemoryIn | dict], *, namespace: str = "default") -> list[MemoryRecord]:
        """Write many memories in one transaction (the batch path of ``remember``)."""
        namespace = checked_namespace(namespace)
        if not memories:
            return []
        if len(memories) > self.settings.max_batch:
            raise ValidationError(f"{len(memories)} memories in one call; the limit is {self.settings.max_batch}")
        inputs = [m if isinstance(m, MemoryIn) else check(MemoryIn, m, f"memory {i}") for i, m in enumerate(memories)]
        return retried(lambda: self._remember(namespace, inputs))  # a name another process made meanwhile: again

    def _remember(self, namespace: str, inputs: list[MemoryIn]) -> list[MemoryRecord]:
        with self._parts.write_lock, self._op("remember", namespace, count=len(inputs)):
            before = written_by(self.store, namespace, [m.id for m in inputs if m.id])  # an id written again
            nodes, vectors, edges = self._builder.memories(namespace, inputs, utcnow())
            self.store.put(namespace, nodes, vectors, edges)
            drop_unwritten(self.store, namespace, before, edges)
        return [n for n in nodes if isinstance(n, MemoryRecord)]

    def update(self, memory_id: str, *, namespace: str = "default", reason: str = "correction", **fields: Any) -> MemoryRecord:
        """Change a memory. A new ``text`` or triple is a correction: a new version SUPERSEDES the
        old one (in its history; a new text re-derives the triple, ``corrected_triple``) and marks
        the turns stating the old value. Other fields (importance, status, ...) change in place."""
        namespace = checked_namespace(namespace)
        patch = check(MemoryPatch, fields, "update")
        changes = patch.model_dump(exclude_unset=True)
        if not changes:
            raise ValidationError("update needs at least one field to change")
        return retried(lambda: self._update(namespace, memory_id, changes, reason))

    def _update(self, namespace: str, memory_id: str, changes: dict[str, Any], reason: str) -> MemoryRecord:
        with self._parts.write_lock, self._op("update", namespace, id=memory_id):
            old = self._get_memory(namespace, memory_id)  # re-read under the lock; written only if still so
            now, expect = utcnow(), {memory_id: old.updated_at}
            corrects = any(k in changes and changes[k] != getattr(old, k) for k in ("text", "subject", "predicate", "object"))
            if not corrects:
                if "source_message_ids" in changes:
                    raise ValidationError("source_message_ids is only taken with a correction (a new text or triple)")
                updated = self._builder.patched(old, changes, now)
                self.store.put(namespace, [updated], expect=expect)
                return updated
            if old.status is not Status.active:
                raise ValidationError(f"memory {memory_id} is {old.status.value}; correct its newest version instead")
            base = {k: getattr(old, k) for k in MemoryIn.model_fields if k not in ("entities", "relations", "id")}
            base.update((corrected_triple(old, changes["text"]) if "text" in changes else {})
                        | {k: v for k, v in changes.items() if k in MemoryIn.model_fields})
            base |= {"valid_at": changes.get("valid_at", now), "source_message_ids": changes.get("source_message_ids") or []}
            base["entities"] = [e.model_dump() for e in self._builder.entities_of(namespace, memory_id)] \
                if "text" not in changes else None
            nodes, vectors, edges = self._builder.memories(namespace, [check(MemoryIn, base, "update")], now)
            new = nodes[0]
            retired, ended = self._builder.retire(namespace, old, new, reason, now)
            marked = self._builder.mark_derived(namespace, old, new, now)
            blank = no_vectors(1 + len(marked), self.embedder.dim)
            self.store.put(namespace, [*nodes, retired, *marked], np.vstack([vectors, blank]), [*edges, *ended],
                           expect=expect)
            return new

    def add_episode(self, summary: str, *, session_id: str | None = None, message_ids: Sequence[str] = (),
                    memory_ids: Sequence[str] = (), importance: float = 0.5, namespace: str = "default") -> Episode:
        """Record what happened in a stretch of conversation, linked to its messages (COVERS),
        the memories it produced (PRODUCED) and the session's previous episode (NEXT)."""
        namespace = checked_namespace(namespace)
        with self._parts.write_lock, self._op("add_episode", namespace):
            linked = self.store.get(namespace, [*message_ids, *memory_ids])
            kinds = {n.id: n.kind for n in linked}
            for ids, kind in ((message_ids, "message"), (memory_ids, "memory")):
                for i in ids:
                    if kinds.get(i) != kind:
                        raise NotFoundError(f"{kind} {i!r} not found in namespace {namespace!r}")
            episode, edges = self._builder.episode(
                namespace, summary, session_id, [n for n in linked if isinstance(n, Message)], memory_ids, importance
            )
            produced = [n.model_copy(update={"episode_id": episode.id}) for n in linked
                        if isinstance(n, MemoryRecord) and n.episode_id is None]  # the episode that made it
            vectors = np.vstack([self.embedder.embed([episode.summary]), no_vectors(len(produced), self.embedder.dim)])
            self.store.put(namespace, [episode, *produced], vectors, edges)
        return episode

    def forget(self, ids: str | Sequence[str] | None = None, *, namespace: str = "default", derived: bool = True,
               reopen: bool = True, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None) -> int:
        """Delete records for good, with their edges, vectors and index entries, the relations a
        forgotten memory stated and the entities nothing links to any more. A session takes its
        turns and episodes; with ``derived`` a turn takes the memories and episodes citing it. A
        forgotten current version makes the one it superseded current again unless ``reopen=False``.
        The text is gone from the embedded file's bytes when it returns, unless a reader of an older
        snapshot holds it for over 2 s: then a warning, ``stats()["unscrubbed"]``, gone once it ends.
        Without ids, ``user_id`` / ``agent_id`` / ``run_id`` forget everything of theirs (sessions,
        turns, memories, episodes, runs); 0 when there is nothing."""
        namespace, scope = checked_namespace(namespace), scope_filter(user_id, agent_id, run_id)
        if ids is None and scope:
            ids = scoped_ids(self.store, namespace, scope)
            if not ids:
                return 0
        ids = [ids] if isinstance(ids, str) else list(ids) if isinstance(ids, (list, tuple)) else None
        if not ids or not all(isinstance(i, str) for i in ids):
            raise ValidationError("forget takes an id, a list of ids, or user_id / agent_id / run_id")
        if scope:  # ids and a scope: only records of that scope go (another user's id is not found)
            ids = owned(self.store, namespace, ids, scope)
        with self._parts.write_lock, self._op("forget", namespace, count=len(ids)):
            return retried(lambda: forget_records(self.store, namespace, ids, derived, utcnow(), reopen))

    def forget_namespace(self, namespace: str) -> int:
        """Delete a whole tenant: every node, edge, vector, index entry and setting of it, on
        either backend. Returns the nodes deleted (0 for one nothing was written to)."""
        namespace = checked_namespace(namespace)
        with self._parts.write_lock, self._op("forget_namespace", namespace):
            return self.store.delete_namespace(namespace)

    def set_soul(self, text: str | None, *, namespace: str = "default") -> None:
        """The identity block (persona, rules) that heads every context of the namespace."""
        namespace = checked_namespace(namespace)
        text = check(_LONG_TEXT, text or "", "soul")
        self.store.set_meta(namespace, "soul", text or None)

    def get_soul(self, *, namespace: str = "default") -> str:
        """The namespace's identity block (``set_soul``), else the configured default."""
        return self.store.get_meta(checked_namespace(namespace), "soul") or self.settings.soul

    # reads ------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        namespace: str = "default",
        filter: RecallFilter | None = None,
        layers: Sequence[Layer] | None = None,
        include_superseded: bool | None = None,
        include_archived: bool | None = None,
        session_id: str | None = None,
        as_of: datetime | None = None,
        record_access: bool | None = None,
        options: RecallOptions | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[ScoredItem]:
        """The k best memories, episodes, procedures and messages for a query, each with its
        five-factor breakdown. What may come back is a ``RecallFilter`` (default
        ``RecallFilter.DEFAULT``; the keyword arguments override its fields): ``as_of`` answers
        what was true at that time. ``query_vector`` skips embedding the query (it must come
        from the same embedder). ``record_access=False`` reads without counting a use. ``user_id``,
        ``agent_id``, ``run_id``: never another's records (theirs, and the shared ones)."""
        overrides = {"layers": tuple(layers) if layers is not None else None, "include_superseded": include_superseded,
                     "include_archived": include_archived, "session_id": session_id, "as_of": as_of,
                     "record_access": record_access, **scope_filter(user_id, agent_id, run_id)}
        base = filter or RecallFilter.DEFAULT
        changes = {key: value for key, value in overrides.items() if value is not None}
        if changes:
            bad = set(changes.get("layers", ())) - set(LAYERS)
            if bad:
                raise ValidationError(f"unknown layer {sorted(bad)[0]!r}; layers are {list(LAYERS)}")
            base = check(RecallFilter, {**base.model_dump(), **changes}, "recall filter")
        return self._recall(query, k=k, namespace=namespace, filter=base, options=options,
                            query_vector=query_vector).items

    def _recall(self, query: str, *, k: int, namespace: str, filter: RecallFilter, options: RecallOptions | None,
                query_vector: Sequence[float] | np.ndarray | None = None) -> RecallResult:
        namespace = checked_namespace(namespace)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty string")
        if len(query) > 2000:
            raise ValidationError(f"query has {len(query)} characters; the limit is 2000")
        query = query.strip()
        whole("k", k, 1, 1000)
        if query_vector is not None:
            try:
                check_vector(query_vector, self.embedder.dim)
            except ValueError as exc:
                raise ValidationError(f"query_vector: {exc}") from exc
            query_vector = np.asarray(query_vector, dtype=np.float32)
        with self._op("recall", namespace, k=k):
            result = self.recaller.recall(namespace, query, k=k, options=options or self.settings.recall,
                                          filter=filter, query_vector=query_vector)
        if self._freeze:
            self._freeze = False
            freeze_heap()
        for s in result.items:
            s.tokens = self.counter.count(s.text)
        return result

    def context(
        self,
        query: str,
        *,
        budget: int | None = None,
        session_id: str | None = None,
        namespace: str = "default",
        k: int = 30,
        options: RecallOptions | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
        layers: Sequence[Layer] | None = None,
        record_access: bool | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Context:
        """A prompt block for ``query`` within ``budget`` tokens: soul, memories, episodes,
        procedures (past runs too when ``layers`` names "trace"), then the session's recent turns
        (L0) and its summary (L1); a namespace or session not written yet gives just the soul.
        ``user_id`` / ``agent_id`` / ``run_id``: never another's records (as ``recall``).
        ``record_access=False`` reads without counting a use."""
        budget = whole("budget", self.settings.context_budget if budget is None else budget, 16, 1_000_000)
        t0 = time.perf_counter()
        asked = {"layers": None if layers is None else tuple(layers), "record_access": record_access,
                 **scope_filter(user_id, agent_id, run_id)}
        asked = {k: v for k, v in asked.items() if v is not None}
        which = check(RecallFilter, RecallFilter.DEFAULT.model_dump() | asked, "context") if asked else RecallFilter.DEFAULT
        recalled = self._recall(query, k=k, namespace=namespace, filter=which, options=options,
                                query_vector=query_vector)
        namespace = checked_namespace(namespace)
        session, recent = None, []
        if session_id is not None:  # a session not started yet has nothing recent (a first call)
            session = next(iter(self.store.get(namespace, [session_id])), None)
            if session is not None and not isinstance(session, Session):
                raise ValidationError(f"{session_id!r} is a {session.kind}, not a session")
            if session is not None and self.settings.recent_turns:
                recent = self.store.query(namespace, "message", session_id=session_id, limit=self.settings.recent_turns)
                recent.reverse()
        ctx = assemble(recalled, budget=budget, counter=self.counter, soul=self.get_soul(namespace=namespace),
                       session=session, recent=recent)
        ctx.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return ctx

    def get(self, record_id: str, *, namespace: str = "default") -> Node:
        namespace = checked_namespace(namespace)
        found = self.store.get(namespace, [record_id])
        if not found:
            raise NotFoundError(f"no record {record_id!r} in namespace {namespace!r}")
        return found[0]

    def _get_memory(self, namespace: str, memory_id: str) -> MemoryRecord:
        rec = self.get(memory_id, namespace=namespace)
        if not isinstance(rec, MemoryRecord):
            raise NotFoundError(f"{memory_id!r} is a {rec.kind}, not a memory")
        return rec

    def list(
        self,
        kind: NodeKind = "memory",
        *,
        namespace: str = "default",
        status: Status | str | None = None,
        entity: str | None = None,
        session_id: str | None = None,
        category: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[Node]:
        """Records of one kind, newest first, filtered by status, entity (name or id), session,
        category, creation time, and whose they are (``user_id``, ``agent_id``, ``run_id``)."""
        namespace = checked_namespace(namespace)
        if kind not in NODE_TYPES:
            raise ValidationError(f"unknown kind {kind!r}; kinds are {sorted(NODE_TYPES)}")
        whole("limit", limit, 1, 10_000), whole("offset", offset, 0, 2**62)
        try:
            statuses = [Status(status)] if status else None
        except ValueError as exc:
            raise ValidationError(f"unknown status {status!r}") from exc
        mentions = find_entity(self.store, namespace, entity).id if entity is not None else None
        return self.store.query(namespace, kind, statuses=statuses, session_id=session_id, category=category,
                                since=since, until=until, mentions=mentions, limit=limit, offset=offset,
                                scope=scope_filter(user_id, agent_id, run_id))

    def history(self, memory_id: str, *, namespace: str = "default") -> History:
        """A memory (or a procedure) with every version it superseded and every version that superseded it."""
        rec = self.get(memory_id, namespace=namespace)
        if not isinstance(rec, (MemoryRecord, Procedure)):
            raise NotFoundError(f"{memory_id!r} is a {rec.kind}; history is kept for memories and procedures")
        return history(self.store, rec)

    def neighbourhood(self, entity: str, *, depth: int = 1, namespace: str = "default", limit: int = 50) -> Neighbourhood:
        """An entity, the entities within ``depth`` relation hops, the relations among them
        and the active memories that mention the entity."""
        namespace = checked_namespace(namespace)
        whole("depth", depth, 0, 3), whole("limit", limit, 1, 10_000)
        return neighbourhood(self.store, find_entity(self.store, namespace, entity), depth, limit)

    def cypher(self, query: str, params: dict[str, Any] | None = None, *, namespace: str = "default") -> list[dict[str, Any]]:
        """A read-only Cypher query's rows (Neo4j), seeing ``namespace`` alone: each pattern needs a
        node ``{namespace: $namespace}``, and ``$namespace`` is ``namespace`` (``store.cypher_scope``)."""
        if not self.store.capabilities.cypher:
            raise ConfigurationError("Memory.cypher needs the Neo4j backend (GRAPHMEM_BACKEND=neo4j): the embedded "
                                     "store has no Cypher engine")
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty Cypher string")
        if params is not None and not (isinstance(params, dict) and all(isinstance(k, str) for k in params)):
            raise ValidationError("params must be a dict with string keys")
        columns, rows = self.store.explore(query, dict(params or {}), namespace)  # type: ignore[attr-defined]
        return [dict(zip(columns, row)) for row in rows]

    def namespaces(self) -> list[str]:
        return self.store.namespaces()

    def stats(self, *, namespace: str = "default") -> dict[str, Any]:
        """Records by kind (and by kind:status), edges, the embedder and the file's size; zeros
        for a namespace nothing was written to."""
        namespace = checked_namespace(namespace)
        out: dict[str, Any] = dict.fromkeys(_COUNTED, 0) | self.store.count(namespace)
        out["namespace"] = namespace
        out["embedder"] = self.embedder.name
        path = self.store.capabilities.file
        if path is not None and path.exists():
            out["file_bytes"] = path.stat().st_size
            out["unscrubbed"] = self.store.unscrubbed()  # forgotten text a reader of an older snapshot still holds
        return out

    # export / import --------------------------------------------------------------------
    def export(self, fp: IO[str], *, namespace: str = "default", vectors: bool = True, user_id: str | None = None,
               agent_id: str | None = None, run_id: str | None = None) -> int:
        """Write a namespace as JSONL (a header, then nodes, then edges); returns lines written.
        With ``vectors`` the embeddings travel too (base64 float32), for a lossless round trip.
        ``user_id`` / ``agent_id`` / ``run_id``: only their sessions, turns, memories, episodes and
        runs, with the edges between them (the namespace's shared entities and procedures stay)."""
        return export(self._parts, fp, checked_namespace(namespace), vectors=vectors,
                      scope=scope_filter(user_id, agent_id, run_id))

    def import_(self, lines: Iterable[str], *, namespace: str | None = None, skip_invalid: bool = False) -> dict[str, Any]:
        """Read a JSONL export. Every line is validated first; a bad line is reported with its
        line number and nothing is written, unless ``skip_invalid`` (then the good lines are
        written and the bad ones listed in the result). Records keep their ids (``namespace`` moves
        them); an entity already there by name or alias takes an imported one's edges (``joined``)."""
        result = import_(self._parts, lines, namespace=namespace, skip_invalid=skip_invalid)
        log.info("import namespace=%(namespace)s nodes=%(nodes)d edges=%(edges)d joined=%(joined)d", result)
        return result
