"""Background extraction: every ``extract_every`` messages of a session form a window; a
worker thread sends each window to the extractor and folds the result into the graph.

The queue is durable: a session's ``extracted_upto`` cursor moves in the same transaction
that writes a window's memories, so a restarted process resumes where the last one stopped.
The write path never waits for the model."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..extract import default_model_path
from ..extract.consolidate import Decision, Fact, decide
from ..extract.extractors import Extractor, InvalidOutput, LlamaExtractor, OpenAICompatibleExtractor, extract_window
from ..extract.schema import Extraction, ExtractedMemory
from ..models import Edge, EdgeType, MemoryRecord, Message, Node, Procedure, Session, Status, Step, utcnow
from ..settings import Settings
from ..text import STOPWORDS, keywords, normalise_name
from .background import BackgroundWorker
from .inputs import EntityIn, MemoryIn

if TYPE_CHECKING:
    from .memory import Memory

log = logging.getLogger(__name__)

# Acknowledgements that carry nothing to remember (besides the stopwords).
TRIVIAL = STOPWORDS | frozenset(
    "ok okay sure good great cool nice fine awesome perfect noted sound sounds right yep yeah lol haha bye anyth "
    "anything els else noth nothing all "
    "morning night see later welcom welcome 好 好的 收到 明白 没问题 哈哈 哈哈哈 嗯 嗯嗯 谢谢 谢 再见 晚安 早 早安 行 可以 对".split()
)
PROCEDURE_MATCH_COS = 0.85
KNOWN_IN_PROMPT = 5  # related memories shown to the model with each window
KNOWN_MIN_COS = 0.3
SUMMARY_EPISODES = 6
# A workflow is only taken when the window reads like one: small models invent procedures
# from ordinary chat ("introduce herself: say hello, ...").
_SEQUENCE_CUES = re.compile(
    r"\b(first|then|next|after that|afterwards|finally|step|steps)\b|首先|然后|接着|之后|最后|第[一二三四五]步|步骤",
    re.IGNORECASE,
)  # L1 keeps the newest episode summaries of the session


def make_extractor(s: Settings) -> Extractor:
    """The extractor the settings name: an OpenAI-compatible server, else the local model."""
    if s.llm_base_url:
        key = s.llm_api_key.get_secret_value() if s.llm_api_key else None
        return OpenAICompatibleExtractor(s.llm_base_url, s.llm_model, api_key=key)
    path = s.model_path or default_model_path(s.cache_dir / "models")
    return LlamaExtractor(path, n_ctx=s.llm_context, n_threads=s.llm_threads, n_gpu_layers=s.llm_gpu_layers)


def is_trivial(messages: list[Message]) -> bool:
    """A window of nothing but greetings, thanks and acknowledgements (English or Chinese)."""
    return all(set(keywords(m.content)) <= TRIVIAL for m in messages)


@dataclass
class Counters:
    """What extraction cost in this process: the numbers ``extraction_status`` reports."""

    windows: int = 0
    skipped: int = 0
    failed: int = 0
    messages: int = 0
    calls: int = 0
    seconds: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0
    memories: int = 0
    log: list[dict[str, Any]] = field(default_factory=list)


class ExtractionWorker(BackgroundWorker):
    label = "extraction"

    def __init__(self, memory: "Memory", extractor: Extractor | None = None) -> None:
        super().__init__()
        self.memory = memory
        self._extractor = extractor
        self.counters = Counters()

    @property
    def mode(self) -> str:
        return self.memory.settings.extraction

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            self._extractor = make_extractor(self.memory.settings)
        return self._extractor

    def pending(self, final: bool, namespace: str | None = None) -> list[tuple[str, Session, int, int]]:
        """(namespace, session, start, end) of every window ready to extract, oldest first."""
        every = self.memory.settings.extract_every
        out = []
        store = self.memory.store
        for ns in [namespace] if namespace else store.namespaces():
            for session in store.query(ns, "session", limit=1_000_000, newest_first=False):
                start = session.extracted_upto
                while session.message_count - start >= every or (final and session.message_count > start):
                    end = min(start + every, session.message_count)
                    out.append((ns, session, start, end))
                    start = end
        return out

    def next_job(self, final: bool) -> tuple[str, Session, int, int] | None:
        windows = self.pending(final)
        return windows[0] if windows else None

    def run_job(self, job: tuple[str, Session, int, int]) -> None:
        ns, session, start, end = job
        self.process(ns, session.id, start, end)

    def run_pending(self, *, final: bool = True, namespace: str | None = None, progress=None) -> int:
        """Extract pending windows in the calling thread; returns how many were processed."""
        windows = self.pending(final, namespace)
        if progress is not None:
            progress(0, len(windows))
        for i, (ns, session, start, end) in enumerate(windows, 1):
            self.process(ns, session.id, start, end)
            if progress is not None:
                progress(i, len(windows))
        return len(windows)

    # one window -------------------------------------------------------------------------
    def process(self, namespace: str, session_id: str, start: int, end: int, *, retry: bool = False) -> dict[str, Any]:
        mem = self.memory
        msgs = [m for m in mem.store.query(namespace, "message", session_id=session_id, seq_range=(start, end),
                                           newest_first=False, limit=end - start) if isinstance(m, Message)]
        entry: dict[str, Any] = {"namespace": namespace, "session": session_id, "window": [start, end]}
        t0 = time.perf_counter()
        extraction: Extraction | None = None
        error = ""
        if not msgs or is_trivial(msgs):
            entry["skipped"] = True
        else:
            try:
                extraction, stats = extract_window(self.extractor, msgs, known=self._known(namespace, msgs),
                                                   max_tokens=mem.settings.llm_max_tokens)
                self.counters.calls += stats.calls
                self.counters.prompt_tokens += stats.prompt_tokens
                self.counters.output_tokens += stats.output_tokens
                entry.update(calls=stats.calls, prompt_tokens=stats.prompt_tokens, output_tokens=stats.output_tokens)
            except InvalidOutput as exc:
                error = str(exc)
        with mem._write_lock:
            found = mem.store.get(namespace, [session_id])
            if not found or not isinstance(found[0], Session):  # forgotten while the model was busy
                log.warning("session %s of %s is gone; window %d:%d dropped", session_id, namespace, start, end)
                return entry
            session = found[0]
            if retry:
                failed = [w for w in session.failed_windows if tuple(w) != (start, end)]
            else:
                failed = list(session.failed_windows)
            update: dict[str, Any] = {"extracted_upto": max(session.extracted_upto, end), "failed_windows": failed}
            nodes: list[Node] = []
            vectors: list[np.ndarray | None] = []
            edges: list[Edge] = []
            if error:
                update["failed_windows"] = [*failed, (start, end)]
                update["last_error"] = error[:500]
                self.counters.failed += 1
                entry["error"] = error
            elif extraction is None:
                update["windows_skipped"] = session.windows_skipped + 1
                self.counters.skipped += 1
            else:
                nodes, vectors, edges, summary, report = self._fold(namespace, session, msgs, extraction)
                update["windows_done"] = session.windows_done + 1
                update["summary"] = summary
                update["summary_updated_at"] = utcnow()
                entry.update(report)
                self.counters.windows += 1
            session = Session.model_validate({**session.model_dump(), **update, "updated_at": utcnow()})
            dim = mem.embedder.dim
            mat = np.vstack([np.full(dim, np.nan, np.float32) if v is None else v for v in [None, *vectors]])
            mem.store.put(namespace, [session, *nodes], mat, edges)
        self.counters.messages += len(msgs)
        self.counters.seconds += time.perf_counter() - t0
        entry["seconds"] = round(time.perf_counter() - t0, 2)
        self.counters.log.append(entry)
        log.info("extracted window %s %s[%d:%d] in %.1f s", namespace, session_id, start, end, entry["seconds"])
        return entry

    def _fold(
        self, namespace: str, session: Session, msgs: list[Message], extraction: Extraction
    ) -> tuple[list[Node], list[np.ndarray | None], list[Edge], str, dict[str, Any]]:
        """Turn one window's extraction into nodes and edges: admission, dedupe and merge,
        supersession, the episode, procedures, archived messages, the session's L1 summary."""
        mem = self.memory
        now = utcnow()
        types = {normalise_name(e.name): e.type for e in extraction.entities}
        window_text = " ".join(m.content for m in msgs)
        procedures = [p for p in extraction.procedures if _SEQUENCE_CUES.search(window_text)]
        admitted = [m for m in extraction.memories if m.importance >= mem.settings.admission_threshold
                    and not _restates_a_step(m, procedures)]
        inputs = [self._memory_input(m, msgs, types) for m in admitted]
        vecs = mem.embedder.embed([i.text for i in inputs]) if inputs else np.zeros((0, mem.embedder.dim))
        decisions: list[Decision] = []
        pool: list[tuple[Fact, np.ndarray]] = []  # this window's accepted candidates
        for inp, vec in zip(inputs, vecs):
            fact = _fact("", inp.text, inp.subject, inp.predicate, inp.object)
            similar = self._similar(namespace, vec) + [(f, float(v @ vec)) for f, v in pool]
            similar.sort(key=lambda fc: -fc[1])
            d = decide(fact, similar)
            decisions.append(d)
            if d.action != "merge":
                pool.append((_fact(f"new:{len(pool)}", inp.text, inp.subject, inp.predicate, inp.object), vec))

        plan: list[tuple[MemoryIn, Decision]] = []
        for inp, d in zip(inputs, decisions):
            if d.target and d.target.startswith("new:"):
                if d.action == "merge":
                    continue  # says again what this window already said
                d = Decision("add")
            plan.append((inp, d))
        fresh = [inp for inp, d in plan if d.action != "merge"]
        nodes, new_vecs, edges = mem._build_memories(namespace, fresh, now) if fresh else ([], [], [])
        vectors: list[np.ndarray | None] = list(new_vecs)
        new_records = iter([n for n in nodes if isinstance(n, MemoryRecord)])
        olds = {r.id: r for r in mem.store.get(namespace, [d.target for _, d in plan if d.target])
                if isinstance(r, MemoryRecord)}
        report: dict[str, Any] = {"added": [], "merged": [], "superseded": []}
        produced: list[str] = []
        for inp, d in plan:
            if d.action == "merge":
                old = olds[d.target]
                merged = _merge(old, inp, now)
                olds[old.id] = merged
                nodes.append(merged)
                vectors.append(mem.embedder.embed([merged.text])[0] if merged.text != old.text else None)
                edges += [Edge(namespace=namespace, source=merged.id, type=EdgeType.DERIVED_FROM, target=m)
                          for m in inp.source_message_ids if m not in old.source_message_ids]
                produced.append(merged.id)
                report["merged"].append({"into": merged.text, "why": d.reason})
                continue
            rec = next(new_records)
            produced.append(rec.id)
            report["added"].append(rec.text)
            old = olds.get(d.target or "")
            if d.action == "supersede" and old is not None and old.status is Status.active:
                retired, ended = mem._retire(namespace, old, rec, d.reason, now)
                olds[old.id] = retired
                nodes.append(retired)
                vectors.append(None)
                edges += ended
                report["superseded"].append({"old": old.text, "new": rec.text, "why": d.reason})

        summary = extraction.episode or "; ".join(m.text for m in admitted[:3]) or f"{len(msgs)} messages"
        episode, ep_edges = mem._build_episode(namespace, summary, session.id, msgs, list(dict.fromkeys(produced)),
                                               max([m.importance for m in admitted], default=0.3))
        for i, n in enumerate(nodes):
            if isinstance(n, MemoryRecord) and n.id in produced and n.episode_id is None:
                nodes[i] = n.model_copy(update={"episode_id": episode.id})
        nodes.append(episode)
        vectors.append(mem.embedder.embed([episode.summary])[0])
        edges += ep_edges

        for proc in procedures:
            node, vec = self._procedure(namespace, proc.task, proc.steps, now)
            nodes.append(node)
            vectors.append(vec)

        for m in msgs:  # the window is represented by its memories and episode now
            nodes.append(Message.model_validate({**m.model_dump(), "status": Status.archived, "updated_at": now}))
            vectors.append(None)

        summaries = [e.summary for e in reversed(mem.store.query(namespace, "episode", session_id=session.id,
                                                                 limit=SUMMARY_EPISODES - 1))] + [episode.summary]
        l1 = " ".join(summaries)
        return nodes, vectors, edges, l1[-4000:], report

    def _memory_input(self, m: ExtractedMemory, msgs: list[Message], types: dict[str, str]) -> MemoryIn:
        named = {normalise_name(n) for n in (m.subject, m.object) if n}
        text = m.text.casefold()
        entities = [EntityIn(name=n, type=types.get(normalise_name(n), "thing")) for n in (m.subject, m.object) if n]
        for norm, etype in types.items():
            if norm and norm not in named and norm in text:
                entities.append(EntityIn(name=norm, type=etype))
        return MemoryIn(
            text=m.text, category=m.kind, subject=m.subject, predicate=m.predicate, object=m.object,
            importance=m.importance, source=m.source, entities=_unique(entities),
            source_message_ids=[x.id for x in msgs], valid_at=msgs[-1].created_at,
        )

    def _known(self, namespace: str, msgs: list[Message]) -> list[MemoryRecord]:
        """The active memories closest to the window, shown to the model as known facts."""
        vec = self.memory.embedder.embed([" ".join(m.content for m in msgs)])[0]
        hits = self.memory.store.vector_search(namespace, "memory", vec, KNOWN_IN_PROMPT, [Status.active])
        found = {r.id: r for r in self.memory.store.get(namespace, [i for i, c in hits if c >= KNOWN_MIN_COS])}
        return [found[i] for i, _ in hits if i in found and isinstance(found[i], MemoryRecord)]

    def _similar(self, namespace: str, vec: np.ndarray) -> list[tuple[Fact, float]]:
        store = self.memory.store
        hits = store.vector_search(namespace, "memory", vec, 8, [Status.active])
        recs = {r.id: r for r in store.get(namespace, [i for i, _ in hits])}
        return [(_fact(r.id, r.text, r.subject, r.predicate, r.object), cos) for i, cos in hits if (r := recs.get(i))]

    def _procedure(self, namespace: str, task: str, steps: list[str], now: datetime) -> tuple[Procedure, np.ndarray]:
        """A procedure seen before is reinforced (seen_count + 1), not duplicated."""
        mem = self.memory
        text = f"{task}: " + "; ".join(steps)
        vec = mem.embedder.embed([text])[0]
        hit = mem.store.vector_search(namespace, "procedure", vec, 1, [Status.active])
        found = mem.store.get(namespace, [hit[0][0]]) if hit and hit[0][1] >= PROCEDURE_MATCH_COS else []
        if found and isinstance(found[0], Procedure):
            old = found[0]
            better = len(steps) > len(old.steps)
            proc = Procedure.model_validate({
                **old.model_dump(), "seen_count": old.seen_count + 1, "updated_at": now,
                "steps": [{"text": s} for s in steps] if better else [s.model_dump() for s in old.steps],
            })
            return proc, vec
        proc = Procedure(namespace=namespace, task=task, steps=[Step(text=s) for s in steps], importance=0.6,
                         confidence=0.7, keywords=keywords(text), created_at=now, updated_at=now)
        return proc, vec


def _restates_a_step(memory: ExtractedMemory, procedures: list) -> bool:
    """Small models often repeat a taught workflow's steps as memories: drop those."""
    own = set(keywords(memory.text)) - set(keywords(memory.subject or ""))
    if not own:
        return False
    for proc in procedures:
        for part in (proc.task, *proc.steps):
            step = set(keywords(part))
            shared = len(own & step)
            if shared / len(own) >= 0.6 or (len(step) >= 2 and shared / len(step) >= 0.75):
                return True
    return False


def _fact(fid: str, text: str, s: str | None, p: str | None, o: str | None) -> Fact:
    return Fact(fid, text, frozenset(keywords(text)), s, p, o)


def _unique(entities: list[EntityIn]) -> list[EntityIn]:
    seen: dict[str, EntityIn] = {}
    for e in entities:
        seen.setdefault(normalise_name(e.name), e)
    return list(seen.values())


def _merge(old: MemoryRecord, new: MemoryIn, now: datetime) -> MemoryRecord:
    """Keep the highest confidence and importance, union the provenance; a candidate that
    says more (a strict superset of keywords) supplements the text."""
    from ..models import SOURCE_CONFIDENCE

    new_conf = new.confidence if new.confidence is not None else SOURCE_CONFIDENCE[new.source]
    more = set(keywords(new.text)) > set(old.keywords)
    return MemoryRecord.model_validate({
        **old.model_dump(),
        "text": new.text if more else old.text,
        "keywords": keywords(new.text) if more else old.keywords,
        "confidence": max(old.confidence, new_conf),
        "importance": max(old.importance, new.importance),
        "source_message_ids": list(dict.fromkeys([*old.source_message_ids, *new.source_message_ids])),
        "updated_at": now,
    })
