"""``Memory``: the one synchronous facade over a store, an embedder and recall."""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np
from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from ..embed import Embedder, make_embedder
from ..extract.extractors import Extractor
from ..errors import ConfigurationError, GraphMemError, ImportFormatError, NamespaceNotFoundError, NotFoundError
from ..errors import ValidationError
from ..models import (
    LAYERS,
    NODE_TYPES,
    SOURCE_CONFIDENCE,
    Context,
    Edge,
    EdgeType,
    Entity,
    Episode,
    History,
    Layer,
    MemoryRecord,
    Message,
    Neighbourhood,
    Node,
    NodeKind,
    Procedure,
    Relation,
    ScoredItem,
    Session,
    Status,
    check_vector,
    item_text,
    utcnow,
)
from ..models.records import NAMESPACE_PATTERN, Namespace, ShortStr
from ..retrieve import Recaller, assemble
from ..settings import RecallOptions, Settings
from ..store import Store, open_store
from ..text import ApproxTokenCounter, EntityTagger, TokenCounter, keywords, normalise_name
from .enrich import Enricher
from .extraction import ExtractionWorker
from .inputs import EntityIn, MemoryIn, MemoryPatch, MessageIn, RelationIn

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)

_NS = TypeAdapter(Namespace)
_SESSION_ID = TypeAdapter(ShortStr)
EXPORT_FORMAT = "graphmem-export/1"


def _check(model: type[M], data: Any, what: str) -> M:
    """Validate at the edge: pydantic errors become graphmem ValidationErrors."""
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or what
        raise ValidationError(f"invalid {what}: {where}: {first['msg']}") from exc


def _namespace(namespace: str) -> str:
    try:
        return _NS.validate_python(namespace)
    except PydanticValidationError as exc:
        raise ValidationError(f"invalid namespace {namespace!r}: it must match {NAMESPACE_PATTERN}") from exc


class Memory:
    """graphmem's Python API. ``Memory(path)`` opens (or creates) an embedded store file;
    ``Memory()`` and ``Memory.from_settings()`` use the ``GRAPHMEM_*`` settings (the backend
    included: ``GRAPHMEM_BACKEND=neo4j``); ``store=`` takes any Store. Every method takes
    ``namespace=`` (the tenant, default ``"default"``) and never reads outside it."""

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
        self.settings = settings or Settings()
        if path is not None:
            self.settings = self.settings.model_copy(update={"path": Path(path), "backend": "embedded"})
        self.embedder = embedder or make_embedder(self.settings.embedder)
        self.store: Store = store or open_store(self.settings)
        self.store.init(embedder=self.embedder.name, dim=self.embedder.dim)
        self.tagger = EntityTagger()
        self.counter = token_counter or ApproxTokenCounter()
        self.recaller = Recaller(self.store, self.embedder)
        self._write_lock = threading.RLock()  # engine writes are read-modify-write: one at a time
        self._enricher = Enricher(self)
        self._extraction = ExtractionWorker(self, extractor)

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> "Memory":
        try:
            settings = settings or Settings(**overrides)
        except PydanticValidationError as exc:
            raise ConfigurationError(f"invalid settings: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
        return cls(settings=settings)

    def close(self) -> None:
        """Stop background work (pending enrichment and extraction stay queued in the store)
        and close the store."""
        self._extraction.close()
        self._enricher.close()
        self.recaller.close()
        self.store.close()

    def flush(self, timeout: float | None = None, *, progress: Callable[[int, int], None] | None = None) -> None:
        """Wait until every message is embedded and tagged and every window, the last partial
        one of each session included, is extracted (unless extraction is off)."""
        self._enricher.flush(timeout)
        if progress is not None and self.settings.extraction == "manual":
            self._extraction.run_pending(final=True, progress=progress)
        self._extraction.flush(timeout)

    def extraction_status(self, *, namespace: str | None = None) -> dict[str, Any]:
        """Windows queued, done, skipped and failed (from the store), and what extraction cost
        in this process: model calls, seconds, prompt and output tokens."""
        namespaces = [self._existing(namespace)] if namespace else self.store.namespaces()
        out: dict[str, Any] = {"mode": self.settings.extraction, "queued": 0, "done": 0, "skipped": 0, "failed": 0}
        for ns in namespaces:
            for session in self.store.query(ns, "session", limit=1_000_000):
                out["done"] += session.windows_done
                out["skipped"] += session.windows_skipped
                out["failed"] += len(session.failed_windows)
        out["queued"] = len(self._extraction.pending(final=False, namespace=namespace))
        out["queued_partial"] = len(self._extraction.pending(final=True, namespace=namespace)) - out["queued"]
        c = self._extraction.counters
        out["this_process"] = {"windows": c.windows, "skipped": c.skipped, "failed": c.failed, "messages": c.messages,
                               "model_calls": c.calls, "seconds": round(c.seconds, 2),
                               "prompt_tokens": c.prompt_tokens, "output_tokens": c.output_tokens,
                               "model_calls_per_1000_messages": round(1000 * c.calls / c.messages, 1) if c.messages else 0}
        return out

    def retry_failed(self, *, namespace: str | None = None) -> int:
        """Run failed windows again, in the calling thread; returns how many were retried."""
        done = 0
        for ns in [self._existing(namespace)] if namespace else self.store.namespaces():
            for session in self.store.query(ns, "session", limit=1_000_000):
                for start, end in list(session.failed_windows):
                    self._extraction.process(ns, session.id, start, end, retry=True)
                    done += 1
        return done

    def pending(self) -> int:
        """Messages stored but not yet embedded (written with ``wait=False``)."""
        return len(self.store.pending_vectors("message", 100_000))

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _op(self, name: str, namespace: str, **fields: Any) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        log.info("%s namespace=%s %s in %.1f ms", name, namespace, extra, (time.perf_counter() - t0) * 1000)

    def _existing(self, namespace: str) -> str:
        namespace = _namespace(namespace)
        if not self.store.has_namespace(namespace):
            raise NamespaceNotFoundError(f"namespace {namespace!r} does not exist (nothing was written to it)")
        return namespace

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
        namespace = _namespace(namespace)
        try:
            session_id = _SESSION_ID.validate_python(session_id)
        except PydanticValidationError as exc:
            raise ValidationError("session_id must be 1-200 characters") from exc
        if isinstance(messages, (str, dict, MessageIn)):
            messages = [messages]
        if not messages:
            raise ValidationError("no messages given")
        if len(messages) > self.settings.max_batch:
            raise ValidationError(f"{len(messages)} messages in one call; the limit is {self.settings.max_batch}")
        inputs = [
            _check(MessageIn, {"content": m} if isinstance(m, str) else m, f"message {i}")
            if not isinstance(m, MessageIn) else m
            for i, m in enumerate(messages)
        ]
        with self._write_lock, self._op("add_messages", namespace, count=len(inputs)):
            now = utcnow()
            session = next(iter(self.store.get(namespace, [session_id])), None)
            if session is not None and not isinstance(session, Session):
                raise ValidationError(f"id {session_id!r} is taken by a {session.kind} in this namespace")
            session = session or _check(Session, {"id": session_id, "namespace": namespace, "created_at": now},
                                        "session_id")
            given = [m.id for m in inputs if m.id]
            if given:  # re-sending a message with a known id is a no-op, not a duplicate
                seen = {n.id for n in self.store.get(namespace, given)}
                inputs = [m for m in inputs if m.id not in seen]
                if not inputs:
                    return []
            texts = [m.content for m in inputs]
            tags = self.tagger.tag_many(texts) if wait else [[] for _ in texts]
            records: list[Message] = [
                _check(Message, {
                    "id": m.id or "", "namespace": namespace, "session_id": session_id, "role": m.role,
                    "speaker": m.speaker, "content": m.content, "seq": session.message_count + i,
                    "created_at": m.created_at or now, "updated_at": now, "entities": [e.name for e in ents],
                    "keywords": keywords(m.content), "metadata": m.metadata,
                }, f"message {i}")
                for i, (m, ents) in enumerate(zip(inputs, tags))
            ]
            session.message_count += len(records)
            session.last_message_at = max([r.created_at for r in records] + [session.last_message_at or records[0].created_at])
            session.updated_at = now
            nan_row = np.full((1, self.embedder.dim), np.nan, dtype=np.float32)
            if wait:
                self.store.put(namespace, [session, *records], np.vstack([nan_row, self.embedder.embed(texts)]))
        if not wait:
            self.store.put(namespace, [session, *records])
            self._enricher.kick()
        if session.message_count - session.extracted_upto >= self.settings.extract_every:
            self._extraction.kick()
        return records

    def remember(self, text: str, *, namespace: str = "default", **fields: Any) -> MemoryRecord:
        """Write one memory explicitly, with its entities (given, or found in the text) and
        relations. ``fields`` are those of ``MemoryIn``: subject, predicate, object, category,
        importance, confidence, source, entities, relations, valid_at, source_message_ids..."""
        return self.remember_many([{"text": text, **fields}], namespace=namespace)[0]

    def remember_many(self, memories: Sequence[MemoryIn | dict], *, namespace: str = "default") -> list[MemoryRecord]:
        """Write many memories in one transaction (the batch path of ``remember``)."""
        namespace = _namespace(namespace)
        if not memories:
            return []
        if len(memories) > self.settings.max_batch:
            raise ValidationError(f"{len(memories)} memories in one call; the limit is {self.settings.max_batch}")
        inputs = [m if isinstance(m, MemoryIn) else _check(MemoryIn, m, f"memory {i}") for i, m in enumerate(memories)]
        with self._write_lock, self._op("remember", namespace, count=len(inputs)):
            nodes, vectors, edges = self._build_memories(namespace, inputs, utcnow())
            self.store.put(namespace, nodes, vectors, edges)
        return [n for n in nodes if isinstance(n, MemoryRecord)]

    def _build_memories(
        self, namespace: str, inputs: Sequence[MemoryIn], now: datetime
    ) -> tuple[list[Node], np.ndarray, list[Edge]]:
        """Memory records, the entities they create and their edges, ready for one ``put``."""
        sources = {sid for m in inputs for sid in m.source_message_ids}
        if sources:
            known = {n.id for n in self.store.get(namespace, list(sources)) if n.kind == "message"}
            if sources - known:
                raise NotFoundError(f"source message {sorted(sources - known)[0]!r} not found in {namespace!r}")
        tag_iter = iter(self.tagger.tag_many([m.text for m in inputs if m.entities is None]))
        all_mentions = [self._mentions(m, next(tag_iter) if m.entities is None else None) for m in inputs]
        resolver = _EntityResolver(self.store, namespace, now)
        resolver.prefetch(e for mentions in all_mentions for e, _ in mentions)  # one lookup, not one per name
        records: list[MemoryRecord] = []
        edges: list[Edge] = []
        for m, mentions in zip(inputs, all_mentions):
            rec = MemoryRecord(
                id=m.id or "", namespace=namespace, text=m.text, category=m.category, subject=m.subject,
                predicate=m.predicate, object=m.object, importance=m.importance,
                confidence=m.confidence if m.confidence is not None else SOURCE_CONFIDENCE[m.source],
                source=m.source, valid_at=m.valid_at or now, invalid_at=m.invalid_at,
                source_message_ids=m.source_message_ids, episode_id=m.episode_id, created_at=now,
                updated_at=now, entities=[e.name for e, _ in mentions], keywords=keywords(m.text),
                metadata=m.metadata,
            )
            records.append(rec)
            edges += self._memory_edges(rec, mentions, m.relations, resolver)
        entities = resolver.new_entities()
        vectors = self.embedder.embed([r.text for r in records] + [e.name for e in entities])
        return [*records, *entities], vectors, edges

    @staticmethod
    def _mentions(m: MemoryIn, tagged: list | None) -> list[tuple[EntityIn, str]]:
        """(entity, role) pairs a memory mentions: subject and object first, then the rest."""
        out: dict[str, tuple[EntityIn, str]] = {}
        for name, role in ((m.subject, "subject"), (m.object, "object")):
            if name:
                out.setdefault(normalise_name(name), (EntityIn(name=name), role))
        listed = m.entities if m.entities is not None else [EntityIn(name=t.name, type=t.type) for t in tagged or []]
        for e in listed:
            key = normalise_name(e.name)
            if key in out and out[key][0].type == "thing":
                out[key] = (e, out[key][1])  # the listed entity carries a better type
            out.setdefault(key, (e, "mention"))
        for r in m.relations:
            for name in (r.source, r.target):
                out.setdefault(normalise_name(name), (EntityIn(name=name), "mention"))
        return [v for k, v in out.items() if k]

    def _memory_edges(
        self, rec: MemoryRecord, mentions: list[tuple[EntityIn, str]], relations: list[RelationIn],
        resolver: "_EntityResolver",
    ) -> list[Edge]:
        ns = rec.namespace
        edges = [
            Edge(namespace=ns, source=rec.id, type=EdgeType.MENTIONS, target=resolver.resolve(e).id, key=role,
                 props={"role": role})
            for e, role in mentions
        ]
        edges += [Edge(namespace=ns, source=rec.id, type=EdgeType.DERIVED_FROM, target=mid) for mid in rec.source_message_ids]
        triples = [(r.source, r.predicate, r.target) for r in relations]
        if rec.subject and rec.predicate and rec.object:
            triples.append((rec.subject, rec.predicate, rec.object))
        for source, predicate, target in triples:
            edges.append(
                Relation(namespace=ns, source_id=resolver.resolve(EntityIn(name=source)).id, predicate=predicate,
                         target_id=resolver.resolve(EntityIn(name=target)).id, memory_id=rec.id,
                         valid_at=rec.valid_at, invalid_at=rec.invalid_at).to_edge()
            )
        return edges

    def update(self, memory_id: str, *, namespace: str = "default", reason: str = "correction", **fields: Any) -> MemoryRecord:
        """Change a memory. A new ``text`` (or subject/predicate/object) is a correction: a new
        version SUPERSEDES the old one, which leaves recall but stays in its history. Other
        fields (importance, confidence, category, status, validity, metadata) change in place."""
        namespace = self._existing(namespace)
        patch = _check(MemoryPatch, fields, "update")
        changes = patch.model_dump(exclude_unset=True)
        if not changes:
            raise ValidationError("update needs at least one field to change")
        with self._write_lock, self._op("update", namespace, id=memory_id):
            old = self._get_memory(namespace, memory_id)  # re-read under the lock
            now = utcnow()
            corrects = any(k in changes and changes[k] != getattr(old, k) for k in ("text", "subject", "predicate", "object"))
            if not corrects:
                updated = MemoryRecord.model_validate({**old.model_dump(), **changes, "updated_at": now})
                self.store.put(namespace, [updated])
                return updated
            if old.status is not Status.active:
                raise ValidationError(f"memory {memory_id} is {old.status.value}; correct its newest version instead")
            base = {k: getattr(old, k) for k in MemoryIn.model_fields if k not in ("entities", "relations", "id")}
            base.update({k: v for k, v in changes.items() if k in MemoryIn.model_fields})
            base["valid_at"] = changes.get("valid_at", now)
            base["entities"] = [
                e.model_dump() for e in (self._entities_of(namespace, memory_id) or [])
            ] if "text" not in changes else None
            nodes, vectors, edges = self._build_memories(namespace, [_check(MemoryIn, base, "update")], now)
            new = nodes[0]
            retired, ended = self._retire(namespace, old, new, reason, now)
            nan_row = np.full((1, self.embedder.dim), np.nan, dtype=np.float32)
            self.store.put(namespace, [*nodes, retired], np.vstack([vectors, nan_row]), [*edges, *ended])
            return new

    def _retire(
        self, namespace: str, old: MemoryRecord, new: MemoryRecord, reason: str, now: datetime
    ) -> tuple[MemoryRecord, list[Edge]]:
        """The superseded version of ``old``, its SUPERSEDES edge from ``new`` and its relation
        edges closed at ``now``."""
        retired = MemoryRecord.model_validate(
            {**old.model_dump(), "status": Status.superseded, "invalid_at": now, "updated_at": now}
        )
        ended = [Edge(namespace=namespace, source=new.id, type=EdgeType.SUPERSEDES, target=old.id,
                      props={"reason": reason, "at": now.isoformat()})]
        for edge in self.store.edges(namespace, self._mentioned_ids(namespace, old.id), types=[EdgeType.RELATES_TO]):
            if edge.props.get("memory_id") == old.id:
                ended.append(edge.model_copy(update={"props": {**edge.props, "invalid_at": now.isoformat()}}))
        return retired, ended

    def _mentioned_ids(self, namespace: str, memory_id: str) -> list[str]:
        return [e.target for e in self.store.edges(namespace, [memory_id], types=[EdgeType.MENTIONS])]

    def _entities_of(self, namespace: str, memory_id: str) -> list[EntityIn]:
        ents = self.store.get(namespace, self._mentioned_ids(namespace, memory_id))
        return [EntityIn(name=e.name, type=e.type, aliases=e.aliases) for e in ents]

    def add_episode(
        self,
        summary: str,
        *,
        session_id: str | None = None,
        message_ids: Sequence[str] = (),
        memory_ids: Sequence[str] = (),
        importance: float = 0.5,
        namespace: str = "default",
    ) -> Episode:
        """Record what happened in a stretch of conversation, linked to its messages (COVERS),
        the memories it produced (PRODUCED) and the session's previous episode (NEXT)."""
        namespace = _namespace(namespace)
        with self._write_lock, self._op("add_episode", namespace):
            linked = self.store.get(namespace, [*message_ids, *memory_ids])
            kinds = {n.id: n.kind for n in linked}
            for ids, kind in ((message_ids, "message"), (memory_ids, "memory")):
                for i in ids:
                    if kinds.get(i) != kind:
                        raise NotFoundError(f"{kind} {i!r} not found in namespace {namespace!r}")
            episode, edges = self._build_episode(
                namespace, summary, session_id, [n for n in linked if isinstance(n, Message)], memory_ids, importance
            )
            self.store.put(namespace, [episode], self.embedder.embed([episode.summary]), edges)
        return episode

    def _build_episode(
        self, namespace: str, summary: Any, session_id: str | None, messages: Sequence[Message],
        memory_ids: Sequence[str], importance: float,
    ) -> tuple[Episode, list[Edge]]:
        """An episode and its COVERS, PRODUCED and NEXT edges, ready for one ``put``."""
        previous = None
        if session_id is not None:
            prior = self.store.query(namespace, "episode", session_id=session_id, limit=1)
            previous = prior[0].id if prior else None
        times = [m.created_at for m in messages]
        episode = _check(Episode, {
            "namespace": namespace, "summary": summary, "session_id": session_id,
            "message_ids": [m.id for m in messages], "memory_ids": list(memory_ids), "importance": importance,
            "previous_episode_id": previous, "start_at": min(times, default=None), "end_at": max(times, default=None),
            "keywords": keywords(summary) if isinstance(summary, str) else [],
        }, "episode")
        edges = [Edge(namespace=namespace, source=episode.id, type=EdgeType.COVERS, target=m.id) for m in messages]
        edges += [Edge(namespace=namespace, source=episode.id, type=EdgeType.PRODUCED, target=i) for i in memory_ids]
        if previous:
            edges.append(Edge(namespace=namespace, source=previous, type=EdgeType.NEXT, target=episode.id))
        return episode, edges

    def add_procedure(
        self, task: str, steps: Sequence[str], *, importance: float = 0.6, confidence: float = 1.0,
        namespace: str = "default",
    ) -> Procedure:
        """Store a learned workflow: the task it serves and its ordered steps."""
        namespace = _namespace(namespace)
        with self._write_lock, self._op("add_procedure", namespace):
            proc = _check(Procedure, {
                "namespace": namespace, "task": task, "steps": [{"text": s} for s in steps],
                "importance": importance, "confidence": confidence,
            }, "procedure")
            proc.keywords = keywords(item_text(proc))
            self.store.put(namespace, [proc], self.embedder.embed([item_text(proc)]))
        return proc

    def forget(self, ids: str | Sequence[str], *, namespace: str = "default") -> int:
        """Delete records for good, with their edges, vectors and index entries."""
        namespace = self._existing(namespace)
        ids = [ids] if isinstance(ids, str) else list(ids)
        with self._write_lock, self._op("forget", namespace, count=len(ids)):
            found = {n.id for n in self.store.get(namespace, ids)}
            if not found:
                raise NotFoundError(f"none of {ids[:3]} exists in namespace {namespace!r}")
            return self.store.delete(namespace, list(found))

    def set_soul(self, text: str | None, *, namespace: str = "default") -> None:
        """The identity block (persona, rules) that heads every context of the namespace."""
        namespace = _namespace(namespace)
        self.store.set_meta(namespace, "soul", text.strip() if text and text.strip() else None)

    def set_summary(self, session_id: str, summary: str, *, namespace: str = "default") -> Session:
        """Set a session's rolling working summary (L1)."""
        namespace = self._existing(namespace)
        with self._write_lock:
            session = self.get(session_id, namespace=namespace)
            if not isinstance(session, Session):
                raise NotFoundError(f"{session_id!r} is not a session")
            now = utcnow()
            session = Session.model_validate(
                {**session.model_dump(), "summary": summary.strip(), "summary_updated_at": now, "updated_at": now}
            )
            self.store.put(namespace, [session])
        return session

    # reads ------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        namespace: str = "default",
        layers: Sequence[Layer] = LAYERS,
        include_superseded: bool = False,
        include_archived: bool = False,
        session_id: str | None = None,
        options: RecallOptions | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
        record_access: bool = True,
    ) -> list[ScoredItem]:
        """The k best memories, episodes, procedures and (not yet extracted) messages for a
        query, each with its five-factor breakdown. ``query_vector`` skips embedding the query
        (it must come from the same embedder). ``record_access=False`` reads without counting
        a use (evaluations, dashboards): the frequency and recency factors stay as they were."""
        return self._recall(query, k=k, namespace=namespace, layers=layers, include_superseded=include_superseded,
                            include_archived=include_archived, session_id=session_id, options=options,
                            query_vector=query_vector, record_access=record_access).items

    def _recall(self, query: str, *, k: int, namespace: str, layers: Sequence[Layer], include_superseded: bool,
                include_archived: bool, session_id: str | None, options: RecallOptions | None,
                query_vector: Sequence[float] | np.ndarray | None = None, record_access: bool = True):
        namespace = self._existing(namespace)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty string")
        if len(query) > 2000:
            raise ValidationError(f"query has {len(query)} characters; the limit is 2000")
        query = query.strip()
        if not 1 <= k <= 1000:
            raise ValidationError("k must be between 1 and 1000")
        bad = set(layers) - set(LAYERS)
        if bad:
            raise ValidationError(f"unknown layer {sorted(bad)[0]!r}; layers are {list(LAYERS)}")
        statuses = [Status.active]
        if include_superseded:
            statuses.append(Status.superseded)
        if include_archived:
            statuses.append(Status.archived)
        if query_vector is not None:
            try:
                check_vector(query_vector, self.embedder.dim)
            except ValueError as exc:
                raise ValidationError(f"query_vector: {exc}") from exc
            query_vector = np.asarray(query_vector, dtype=np.float32)
        with self._op("recall", namespace, k=k):
            return self.recaller.recall(namespace, query, k=k, options=options or self.settings.recall,
                                        layers=layers, statuses=statuses, session_id=session_id,
                                        query_vector=query_vector, record_access=record_access)

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
    ) -> Context:
        """A prompt block for ``query`` within ``budget`` tokens: soul, memories, episodes,
        procedures, then the session's recent turns (L0) and its summary (L1)."""
        budget = budget or self.settings.context_budget
        if budget < 16:
            raise ValidationError("budget must be at least 16 tokens")
        t0 = time.perf_counter()
        recalled = self._recall(query, k=k, namespace=namespace, layers=LAYERS, include_superseded=False,
                                include_archived=False, session_id=None, options=options, query_vector=query_vector)
        namespace = _namespace(namespace)
        session, recent = None, []
        if session_id is not None:
            found = self.store.get(namespace, [session_id])
            if not found or not isinstance(found[0], Session):
                raise NotFoundError(f"session {session_id!r} not found in namespace {namespace!r}")
            session = found[0]
            if self.settings.recent_turns:
                recent = self.store.query(namespace, "message", session_id=session_id, limit=self.settings.recent_turns)
                recent.reverse()
        soul = self.store.get_meta(namespace, "soul") or self.settings.soul
        ctx = assemble(recalled, budget=budget, counter=self.counter, soul=soul, session=session, recent=recent)
        ctx.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return ctx

    def get(self, record_id: str, *, namespace: str = "default") -> Node:
        namespace = self._existing(namespace)
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
    ) -> list[Node]:
        """Records of one kind, newest first, filtered by status, entity (name or id),
        session, category and creation time."""
        namespace = self._existing(namespace)
        if kind not in NODE_TYPES:
            raise ValidationError(f"unknown kind {kind!r}; kinds are {sorted(NODE_TYPES)}")
        if not 1 <= limit <= 10_000 or offset < 0:
            raise ValidationError("limit must be 1..10000 and offset >= 0")
        try:
            statuses = [Status(status)] if status else None
        except ValueError as exc:
            raise ValidationError(f"unknown status {status!r}") from exc
        ids = None
        if entity is not None:
            ent = self._entity(namespace, entity)
            ids = [e.source for e in self.store.edges(namespace, [ent.id], types=[EdgeType.MENTIONS], direction="in")]
        return self.store.query(namespace, kind, statuses=statuses, session_id=session_id, category=category,
                                since=since, until=until, ids=ids, limit=limit, offset=offset)

    def _entity(self, namespace: str, name_or_id: str) -> Entity:
        found = self.store.get(namespace, [name_or_id])
        if found and isinstance(found[0], Entity):
            return found[0]
        hit = self.store.find_entities(namespace, [name_or_id])
        if not hit:
            raise NotFoundError(f"no entity named {name_or_id!r} in namespace {namespace!r}")
        return next(iter(hit.values()))

    def history(self, memory_id: str, *, namespace: str = "default") -> History:
        """A memory with every version it superseded and every version that superseded it."""
        namespace = self._existing(namespace)
        memory = self._get_memory(namespace, memory_id)
        reasons: dict[str, str] = {}

        def walk(start: str, direction: str) -> list[str]:
            seen, order, frontier = {start}, [], [start]
            while frontier:
                edges = self.store.edges(namespace, frontier, types=[EdgeType.SUPERSEDES], direction=direction)
                frontier = []
                for e in edges:
                    other = e.target if direction == "out" else e.source
                    reasons[e.source] = e.props.get("reason", "")
                    if other not in seen:
                        seen.add(other)
                        order.append(other)
                        frontier.append(other)
            return order

        older = self.store.get(namespace, walk(memory_id, "out"))
        newer = self.store.get(namespace, walk(memory_id, "in"))
        return History(
            memory=memory,
            supersedes=sorted(older, key=lambda m: m.created_at),
            superseded_by=sorted(newer, key=lambda m: m.created_at),
            reasons=reasons,
        )

    def neighbourhood(self, entity: str, *, depth: int = 1, namespace: str = "default", limit: int = 50) -> Neighbourhood:
        """An entity, the entities within ``depth`` relation hops, the relations among them
        and the active memories that mention the entity."""
        namespace = self._existing(namespace)
        if not 0 <= depth <= 3:
            raise ValidationError("depth must be 0..3")
        ent = self._entity(namespace, entity)
        hops = self.store.neighbours(namespace, [ent.id], depth)
        entities = self.store.get(namespace, list(hops))
        rel_edges = self.store.edges(namespace, list(hops), types=[EdgeType.RELATES_TO], direction="out")
        relations = [Relation.from_edge(e) for e in rel_edges if e.target in hops]
        mem_ids = [e.source for e in self.store.edges(namespace, [ent.id], types=[EdgeType.MENTIONS], direction="in")]
        memories = self.store.query(namespace, "memory", statuses=[Status.active], ids=mem_ids, limit=limit)
        return Neighbourhood(entity=ent, entities=[e for e in entities if e.id != ent.id], relations=relations,
                             memories=memories, hops=hops)

    def namespaces(self) -> list[str]:
        return self.store.namespaces()

    def stats(self, *, namespace: str = "default") -> dict[str, Any]:
        namespace = self._existing(namespace)
        out: dict[str, Any] = dict(self.store.count(namespace))
        out["namespace"] = namespace
        out["embedder"] = self.embedder.name
        path = getattr(self.store, "path", None)
        if path is not None and Path(path).exists():
            out["file_bytes"] = Path(path).stat().st_size
        return out

    # export / import --------------------------------------------------------------------
    def export(self, fp: IO[str], *, namespace: str = "default", vectors: bool = True) -> int:
        """Write a namespace as JSONL (a header, then nodes, then edges); returns lines written.
        With ``vectors`` the embeddings travel too (base64 float32), for a lossless round trip."""
        namespace = self._existing(namespace)
        lines = 0
        soul = self.store.get_meta(namespace, "soul")
        fp.write(json.dumps({"format": EXPORT_FORMAT, "namespace": namespace, "embedder": self.embedder.name,
                             "dim": self.embedder.dim, "soul": soul}, ensure_ascii=False) + "\n")
        ids: list[str] = []
        for kind in ("session", "entity", "message", "episode", "memory", "procedure"):
            offset = 0
            while True:
                batch = self.store.query(namespace, kind, limit=1000, offset=offset, newest_first=False)
                if not batch:
                    break
                vecs = self.store.vectors(namespace, [n.id for n in batch]) if vectors else {}
                for node in batch:
                    row = {"node": node.model_dump(mode="json")}
                    if node.id in vecs:
                        row["vector"] = base64.b64encode(vecs[node.id].astype("<f4").tobytes()).decode()
                    fp.write(json.dumps(row, ensure_ascii=False) + "\n")
                    ids.append(node.id)
                    lines += 1
                offset += len(batch)
        for i in range(0, len(ids), 500):
            for edge in self.store.edges(namespace, ids[i : i + 500], direction="out"):
                fp.write(json.dumps({"edge": edge.model_dump(mode="json")}, ensure_ascii=False) + "\n")
                lines += 1
        return lines

    def import_(self, lines: Iterable[str], *, namespace: str | None = None, skip_invalid: bool = False) -> dict[str, Any]:
        """Read a JSONL export. Every line is validated first; a bad line is reported with its
        line number and nothing is written, unless ``skip_invalid`` (then the good lines are
        written and the bad ones listed in the result). Records keep their ids; ``namespace``
        moves them into another namespace."""
        target = _namespace(namespace) if namespace else None
        nodes: list[Node] = []
        vectors: dict[str, np.ndarray] = {}
        edges: list[Edge] = []
        errors: list[ImportFormatError] = []
        header: dict[str, Any] = {}
        for lineno, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
                if not isinstance(row, dict):
                    raise ValueError("a line must be a JSON object")
                if "format" in row:
                    if row["format"] != EXPORT_FORMAT:
                        raise ValueError(f"unknown format {row['format']!r}")
                    header = row
                    target = target or _namespace(row["namespace"])
                elif "node" in row:
                    data = dict(row["node"])
                    target = target or _namespace(data.get("namespace", "default"))
                    data["namespace"] = target
                    kind = data.get("kind")
                    if kind not in NODE_TYPES:
                        raise ValueError(f"unknown kind {kind!r}")
                    node = NODE_TYPES[kind].model_validate(data)
                    if "vector" in row:
                        vec = np.frombuffer(base64.b64decode(row["vector"], validate=True), dtype="<f4").astype(np.float32)
                        if vec.shape[0] != self.embedder.dim or not np.all(np.isfinite(vec)):
                            raise ValueError(f"vector must be {self.embedder.dim} finite float32 values")
                        vectors[node.id] = vec
                    nodes.append(node)
                elif "edge" in row:
                    data = dict(row["edge"])
                    target = target or _namespace(data.get("namespace", "default"))
                    data["namespace"] = target
                    edges.append(Edge.model_validate(data))
                else:
                    raise ValueError("expected a 'format', 'node' or 'edge' object")
            except (ValueError, PydanticValidationError, GraphMemError, TypeError) as exc:
                msg = exc.errors()[0]["msg"] if isinstance(exc, PydanticValidationError) else str(exc)
                errors.append(ImportFormatError(lineno, msg))
        if errors and not skip_invalid:
            detail = "; ".join(str(e) for e in errors[:5])
            raise ImportFormatError(errors[0].line, f"{len(errors)} bad line(s), nothing imported: {detail}")
        if target is None:
            raise ValidationError("the import holds no records")
        if header and (header.get("embedder") != self.embedder.name):
            vectors.clear()  # vectors of another model are re-computed below
        node_ids = {n.id for n in nodes}
        if skip_invalid:
            existing = {n.id for n in self.store.get(target, list({e.source for e in edges} | {e.target for e in edges}))}
            edges = [e for e in edges if {e.source, e.target} <= node_ids | existing]
        with self._op("import", target, nodes=len(nodes), edges=len(edges)):
            need = [n for n in nodes if n.id not in vectors and n.kind not in ("session", "entity")]
            if need:
                for n, v in zip(need, self.embedder.embed([item_text(n) for n in need])):
                    vectors[n.id] = v
            for i in range(0, max(len(nodes), 1), 5000):
                chunk = nodes[i : i + 5000]
                mat = np.full((len(chunk), self.embedder.dim), np.nan, dtype=np.float32)
                for j, n in enumerate(chunk):
                    if n.id in vectors:
                        mat[j] = vectors[n.id]
                last = i + 5000 >= len(nodes)
                self.store.put(target, chunk, mat if chunk else None, edges if last else ())
            if header.get("soul"):
                self.store.set_meta(target, "soul", header["soul"])
        return {"namespace": target, "nodes": len(nodes), "edges": len(edges),
                "errors": [{"line": e.line, "reason": e.reason} for e in errors]}


class _EntityResolver:
    """Maps entity names to existing entities (normalised name or alias), creating new ones
    once per batch, so one name never becomes two nodes."""

    def __init__(self, store: Store, namespace: str, now: datetime) -> None:
        self.store = store
        self.namespace = namespace
        self.now = now
        self._known: dict[str, Entity] = {}
        self._new: dict[str, Entity] = {}
        self._found: dict[str, Entity] = {}  # stored entities by normalised name, of the names looked up
        self._looked_up: set[str] = set()

    def prefetch(self, entities: Iterable[EntityIn]) -> None:
        """Look up the stored entities of many names and aliases in one store call."""
        names = {normalise_name(n) for e in entities for n in (e.name, *e.aliases)} - {""} - self._looked_up
        if names:
            self._found.update(self.store.find_entities(self.namespace, names))
            self._looked_up |= names

    def resolve(self, e: EntityIn) -> Entity:
        key = normalise_name(e.name)
        if key in self._known:
            return self._known[key]
        wanted = [key, *(normalise_name(a) for a in e.aliases)]
        self.prefetch([e])
        found = {n: self._found[n] for n in wanted if n in self._found}
        ent = found.get(key) or next(iter(found.values()), None)
        if ent is None:
            ent = Entity(namespace=self.namespace, name=e.name, type=e.type, aliases=e.aliases, created_at=self.now,
                         updated_at=self.now)
            self._new[ent.id] = ent
        elif (set(e.aliases) - set(ent.aliases)) or (ent.type == "thing" and e.type != "thing"):
            ent = ent.model_copy(update={"aliases": sorted(set(ent.aliases) | set(e.aliases)),
                                         "type": e.type if ent.type == "thing" else ent.type, "updated_at": self.now})
            self._new[ent.id] = ent
        for name in {key, *(normalise_name(a) for a in e.aliases)}:
            self._known[name] = ent
        return ent

    def new_entities(self) -> list[Entity]:
        return list(self._new.values())
