"""Background extraction: every ``extract_every`` messages of a session form a window; a
worker thread sends each window to the extractor and folds the result into the graph
(``graphmem.lifecycle.fold``).

The queue is durable: a session's ``extracted_upto`` cursor moves in the same transaction
that writes a window's memories, so a restarted process resumes where the last one stopped.
The write path never waits for the model.

Several processes may share one store (``graphmem serve --workers``, replicas on one Neo4j): a
process claims a session's extraction with a lease in the store (``Store.claim``), renews it
while the model runs and gives it back after; the others skip that session, and take it over
once a dead process's lease runs out. A window is folded only while the session's cursor still
stands at its start, so a window one process finished is never folded again by another that
was asked the same window (its lease ran out while the model was slow)."""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..extract import default_model_path
from ..errors import ExtractionError, GraphMemError
from ..extract.extractors import ASSISTANT_CHARS, ExtractionStats, Extractor, LlamaExtractor, OpenAICompatibleExtractor, extract_window
from ..extract.judge import Verdict, judge_window, notes_of, signals_a_change
from ..extract.schema import Extraction
from ..lifecycle import GraphBuilder, Parts, WindowFolder
from ..lifecycle.chains import Change
from ..lifecycle.swaps import clauses_of
from ..models import Message, Session, utcnow
from ..store.base import lease_holder
from ..settings import Settings
from ..text import STOPWORDS, keywords
from ..telemetry import spanned, window_attributes
from ..text.tokencount import ApproxTokenCounter
from ..background import BackgroundWorker
from .guard import retried

log = logging.getLogger(__name__)

# Acknowledgements that carry nothing to remember (besides the stopwords).
TRIVIAL = STOPWORDS | frozenset(
    "ok okay sure good great cool nice fine awesome perfect noted sound sounds right yep yeah lol haha bye anyth "
    "anything els else noth nothing all "
    "morning night see later welcom welcome 好 好的 收到 明白 没问题 哈哈 哈哈哈 嗯 嗯嗯 谢谢 谢 再见 晚安 早 早安 行 可以 对".split()
)
Progress = Callable[[int, int], None]
JUDGE_MOST = 6  # questions to the model about stored memories, a window (~0.9 CPU s each here)


def make_extractor(s: Settings) -> Extractor:
    """The extractor the settings name: an OpenAI-compatible server, else the local model."""
    if s.llm_base_url:
        key = s.llm_api_key.get_secret_value() if s.llm_api_key else None
        return OpenAICompatibleExtractor(s.llm_base_url, s.llm_model, api_key=key)
    path = s.model_path or default_model_path(s.cache_dir / "models")
    return LlamaExtractor(path, n_ctx=s.llm_context, n_threads=s.llm_threads, n_gpu_layers=s.llm_gpu_layers,
                          draft_tokens=s.llm_draft_tokens)


# What a memory is made of: a first person, a number, a date or time, a habit or a change, a like
# or dislike, a name. Chinese drops the first person ("地铁太挤了，现在每天拼车上班。" is the
# speaker's commute): its habits and changes are cues of their own.
_CUES = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|us)\b|\d|"
    r"\b(today|tomorrow|yesterday|tonight|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)\b|"
    r"\b(now|these days|every|mornings?|evenings?|afternoons?|usually|recently|any ?more)\b|"
    r"\b(like[sd]?|love[sd]?|hate[sd]?|prefer(s|red)?|favou?rite|enjoy(s|ed)?|allergic|can't stand)\b|"
    r"\b(remember|always|never|please|first|then|next|finally|step|when)\b|"
    r"我|咱|俺|喜欢|讨厌|爱|过敏|今天|明天|昨天|周|星期|月|号|年|[一二三四五六七八九十两]|记住|总是|请|首先|然后|最后|步骤|"
    r"现在|最近|以前|平时|一般|经常|每|早上|早饭|中午|下午|晚上|已经|不再|改|换|搬|卖|戒|辞",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+")  # a capitalised word inside a sentence


def is_trivial(messages: list[Message]) -> bool:
    """A window of nothing but greetings, thanks and acknowledgements (English or Chinese)."""
    return all(set(keywords(m.content)) <= TRIVIAL for m in messages)


def is_uninformative(messages: list[Message]) -> bool:
    """Information gating before the model: a window is skipped when it is trivial, or when no
    user turn has a cue a memory is made of (a first person, a number, a date, a habit or a
    change, a like or dislike, a name inside a sentence or one the turn was tagged with, an
    instruction or a sequence of steps). benchmarks/extraction_quality.py measures the facts
    this loses (none on its set: "Kunle got promoted to head of the history department." and
    "何磊最近在自学Rust。" were skipped before the tagged names counted)."""
    if is_trivial(messages):
        return True
    said = [m for m in messages if m.role != "assistant"]
    return not any(_CUES.search(m.content) or _NAME.search(m.content) or m.entities for m in said)


_TOKENS = ApproxTokenCounter()


def visible_tokens(m: Message) -> int:
    """About how many tokens of a message the model reads (the assistant's turns are cut)."""
    return _TOKENS.count(m.content[:ASSISTANT_CHARS + 4] if m.role == "assistant" else m.content)


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


def lease_key(session_id: str) -> str:
    """The lease a process holds on a session's extraction (kept in the namespace's meta)."""
    return f"lease:extract:{session_id}"


def _dead_here(owner: str) -> bool:
    """Whether a lease's owner (``host:pid:tag``) was a process of this machine that is gone."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


class ExtractionWorker(BackgroundWorker):
    label = "extraction"

    def __init__(self, parts: Parts, builder: GraphBuilder, extractor: Extractor | None = None) -> None:
        super().__init__()
        self.parts = parts
        self.folder = WindowFolder(parts, builder)
        self._extractor = extractor
        self.counters = Counters()
        self._name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.held_elsewhere = False  # the last next_job() skipped a session another process holds

    @property
    def lease_seconds(self) -> float:
        return self.parts.settings.extraction_lease_seconds

    def waiting(self) -> bool:
        return self.held_elsewhere

    @property
    def owner(self) -> str:
        """Who holds a lease: this worker in this thread (the background thread and a caller's
        ``extract()`` in the same process are two holders; ``host:pid:...``)."""
        return f"{self._name}:{threading.get_ident()}"

    def claim(self, namespace: str, session_id: str, owner: str) -> bool:
        """Take (or renew) the session's extraction lease; a lease of a process of this machine
        that no longer runs (killed, crashed) is taken over at once instead of when it runs out."""
        store, key = self.parts.store, lease_key(session_id)
        if store.claim(namespace, key, owner, self.lease_seconds):
            return True
        holder = lease_holder(store.get_meta(namespace, key))[0]
        return holder is not None and _dead_here(holder) and store.claim(
            namespace, key, owner, self.lease_seconds, take_from=holder)

    @contextmanager
    def leased(self, namespace: str, session_id: str) -> Iterator[bool]:
        """Hold the session's extraction lease for the block (True), renewed every third of its
        term, and give it back after; False (and nothing held) while another holds it."""
        store, key, term, owner = self.parts.store, lease_key(session_id), self.lease_seconds, self.owner
        if not self.claim(namespace, session_id, owner):
            yield False
            return
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(term / 3):
                try:
                    if not store.claim(namespace, key, owner, term):
                        log.warning("the extraction lease on %s %s passed to another process", namespace, session_id)
                        return
                except GraphMemError as exc:  # the store is unreachable for now: try again at the next beat
                    log.warning("renewing the extraction lease on %s %s failed: %s", namespace, session_id, exc)

        beat = threading.Thread(target=renew, name="graphmem-extraction-lease", daemon=True)
        beat.start()
        try:
            yield True
        finally:
            stop.set()
            beat.join()
            self._give_back(namespace, session_id, owner)

    def _give_back(self, namespace: str, session_id: str, owner: str) -> None:
        try:
            self.parts.store.release(namespace, lease_key(session_id), owner)
        except GraphMemError as exc:  # it runs out by itself
            log.warning("giving back the extraction lease on %s %s failed: %s", namespace, session_id, exc)

    @property
    def mode(self) -> str:
        return self.parts.settings.extraction

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            self._extractor = make_extractor(self.parts.settings)
        return self._extractor

    def pending(self, final: bool, namespace: str | None = None) -> list[tuple[str, Session, int, int]]:
        """(namespace, session, start, end) of every window ready to extract, oldest first."""
        out = []
        store = self.parts.store
        for ns in [namespace] if namespace else store.namespaces():
            for session in store.query(ns, "session", limit=1_000_000, newest_first=False):
                out.extend(self._windows(ns, session, final))
        return out

    def _windows(self, ns: str, session: Session, final: bool) -> list[tuple[str, Session, int, int]]:
        every = self.parts.settings.extract_every
        out, start = [], session.extracted_upto
        while session.next_seq - start >= every or (final and session.next_seq > start):
            end = min(start + every, session.next_seq)
            out.append((ns, session, start, end))
            start = end
        return out

    def next_job(self, final: bool, namespace: str | None = None) -> tuple[str, Session, int, int] | None:
        """The oldest pending window of a session no other process holds (``held_elsewhere``
        says whether one was skipped), merged with the next ones of its session while their text
        stays within ``extract_budget_tokens``: fewer, fuller model calls when a backlog builds up
        (a bulk import, a burst of short turns); a window that arrives alone is sent alone. The
        session's lease is claimed here and held by ``run_job``.

        The session is read again once its lease is held: between the listing and the claim
        another process may have folded its windows and given the lease back, and a window
        taken from the listing would be asked of the model a second time (its reply dropped)."""
        windows = self.pending(final, namespace)
        self.held_elsewhere = False
        seen: set[tuple[str, str]] = set()
        for ns, session, _, _ in windows:
            if (ns, session.id) in seen:
                continue
            seen.add((ns, session.id))
            if not self.claim(ns, session.id, self.owner):
                self.held_elsewhere = True
                continue
            now = self._session(ns, session.id)
            fresh = self._windows(ns, now, final) if now is not None else []
            if fresh:
                return self._merged(fresh)
            self._give_back(ns, session.id, self.owner)
        return None

    def _session(self, namespace: str, session_id: str) -> Session | None:
        """The session as the store holds it now (None once forgotten)."""
        found = self.parts.store.get(namespace, [session_id])
        return found[0] if found and isinstance(found[0], Session) else None

    def _merged(self, windows: list[tuple[str, Session, int, int]]) -> tuple[str, Session, int, int]:
        ns, session, start, end = windows[0]
        budget = self.parts.settings.extract_budget_tokens
        follow = windows[1:]  # one session's, in order
        if budget <= 0 or not follow:
            return windows[0]
        last = follow[-1][3]
        msgs = [m for m in self.parts.store.query(ns, "message", session_id=session.id, seq_range=(start, last),
                                                  newest_first=False, limit=last - start) if isinstance(m, Message)]
        size = {m.seq: visible_tokens(m) for m in msgs}
        said = {m.seq: m.role != "assistant" for m in msgs}
        most = self.parts.settings.extract_budget_turns or math.inf  # user turns a merged window may hold
        used = sum(size.get(q, 0) for q in range(start, end))
        turns = sum(said.get(q, False) for q in range(start, end))
        for _, _, s2, e2 in follow:
            more = sum(size.get(q, 0) for q in range(s2, e2))
            told = sum(said.get(q, False) for q in range(s2, e2))
            if s2 != end or used + more > budget or turns + told > most:
                break
            used, end, turns = used + more, e2, turns + told
        return ns, session, start, end

    def run_job(self, job: tuple[str, Session, int, int]) -> None:
        ns, session, start, end = job
        with self.leased(ns, session.id) as held:  # claimed by next_job: renewed here, given back after
            if held:
                self.process(ns, session.id, start, end)

    def run_pending(self, *, final: bool = True, namespace: str | None = None, progress: Progress | None = None) -> int:
        """Extract pending windows in the calling thread, waiting for those another process
        holds (until it finishes them, or its lease runs out and this one takes over); returns
        how many model windows (merged ones count once) this process ran."""
        total = len(self.pending(final, namespace))
        if progress is not None:
            progress(0, total)
        done = 0
        while (job := self.next_or_wait(final, namespace)) is not None:
            self.run_job(job)
            done += 1
            if progress is not None:
                progress(total - len(self.pending(final, namespace)), total)
        return done

    @property
    def poll_seconds(self) -> float:
        """How often to look again at work another process holds."""
        return min(5.0, self.lease_seconds / 4)

    def status(self, namespace: str | None) -> dict[str, Any]:
        """What ``Memory.extraction_status`` reports."""
        store = self.parts.store
        out: dict[str, Any] = {"mode": self.mode, "queued": 0, "done": 0, "skipped": 0, "failed": 0, "last_error": ""}
        latest = None
        for ns in [namespace] if namespace else store.namespaces():
            for session in store.query(ns, "session", limit=1_000_000):
                out["done"] += session.windows_done
                out["skipped"] += session.windows_skipped
                out["failed"] += len(session.failed_windows)
                if session.failed_windows and (latest is None or session.updated_at > latest.updated_at):
                    latest = session
        out["last_error"] = latest.last_error if latest else ""
        out["queued"] = len(self.pending(final=False, namespace=namespace))
        out["queued_partial"] = len(self.pending(final=True, namespace=namespace)) - out["queued"]
        c = self.counters
        out["this_process"] = {"windows": c.windows, "skipped": c.skipped, "failed": c.failed, "messages": c.messages,
                               "model_calls": c.calls, "seconds": round(c.seconds, 2),
                               "prompt_tokens": c.prompt_tokens, "output_tokens": c.output_tokens,
                               "model_calls_per_1000_messages": round(1000 * c.calls / c.messages, 1) if c.messages else 0}
        return out

    def retry_failed(self, namespace: str | None) -> int:
        """Run the failed windows of every session no other process holds again (as the
        session stands once its lease is held: another process may have retried them since
        the listing, as in ``next_job``)."""
        done = 0
        store = self.parts.store
        for ns in [namespace] if namespace else store.namespaces():
            for session in store.query(ns, "session", limit=1_000_000):
                if not session.failed_windows:
                    continue
                with self.leased(ns, session.id) as held:
                    now = self._session(ns, session.id) if held else None
                    if now is None:
                        continue
                    for start, end in list(now.failed_windows):
                        self.process(ns, session.id, start, end, retry=True)
                        done += 1
        return done

    # one window -------------------------------------------------------------------------
    def judge(self, namespace: str, msgs: list[Message]) -> list[Verdict]:
        """The model's reading of whether the window ends each stored memory of a speaker whose
        turns signal a change (``graphmem.extract.judge``): the speaker's memories closest to
        their turns, asked before the write lock, at most ``JUDGE_MOST`` questions a window; none
        where the extractor cannot answer one."""
        ask = getattr(self.extractor, "yes_probability", None)
        if ask is None or not self.parts.settings.llm_judge:
            return []
        out: list[Verdict] = []
        for speaker in dict.fromkeys(m.speaker for m in msgs if m.role != "assistant" and m.speaker):
            turns = [m for m in msgs if m.speaker == speaker and m.role != "assistant"]
            if len(out) >= JUDGE_MOST or not signals_a_change(turns):
                continue
            mine = self.folder.memories_of(namespace, speaker, " ".join(m.content for m in turns), JUDGE_MOST)
            notes = [(r.id, note, clause) for r in mine for note, clause in notes_of(r, clauses_of(r))]
            out += judge_window(ask, turns, speaker, notes[:JUDGE_MOST - len(out)])
        return out

    @spanned("graphmem.extraction.window", namespace_arg=1)
    def process(self, namespace: str, session_id: str, start: int, end: int, *, retry: bool = False) -> dict[str, Any]:
        store = self.parts.store
        msgs = [m for m in store.query(namespace, "message", session_id=session_id, seq_range=(start, end),
                                       newest_first=False, limit=end - start) if isinstance(m, Message)]
        entry: dict[str, Any] = {"namespace": namespace, "session": session_id, "window": [start, end]}
        t0 = time.perf_counter()
        extraction: Extraction | None = None
        verdicts: list[Verdict] = []
        error = ""
        if not msgs or is_uninformative(msgs):
            entry["skipped"] = True
        else:
            stats: ExtractionStats | None = None
            try:
                extraction, stats = extract_window(self.extractor, msgs, known=self.folder.known(namespace, msgs),
                                                   max_tokens=self.parts.settings.llm_max_tokens,
                                                   whole=self.parts.settings.llm_whole_reply)
                verdicts = self.judge(namespace, msgs)
                if verdicts:
                    entry["judged"] = len(verdicts)
            except ExtractionError as exc:  # an unusable reply, a model that will not load, a failing server
                stats = getattr(exc, "stats", None)  # unusable replies cost their calls all the same
                error = str(exc) or type(exc).__name__
                # a caller of extract() gets the failure in its report; a background one has none
                log.log(logging.WARNING if threading.current_thread() is self._thread else logging.INFO, "window %s %s[%d:%d] failed: %s",
                        namespace, session_id, start, end, error)
            if stats is not None:
                self.counters.calls += stats.calls
                self.counters.prompt_tokens += stats.prompt_tokens
                self.counters.output_tokens += stats.output_tokens
                entry.update(calls=stats.calls, prompt_tokens=stats.prompt_tokens, output_tokens=stats.output_tokens)

        def write() -> bool:
            with self.parts.write_lock:
                session = self._session(namespace, session_id)
                if session is None:  # forgotten while the model was busy
                    log.warning("session %s of %s is gone; window %d:%d dropped", session_id, namespace, start, end)
                    return False
                if retry:
                    gone = (start, end) not in {tuple(w) for w in session.failed_windows}
                else:
                    gone = session.extracted_upto > start
                if gone:
                    log.info("window %s %s[%d:%d] was folded by another process; this one's reply is dropped",
                             namespace, session_id, start, end)
                    return False
                out = Change(expect={session_id: session.updated_at})  # another writer appended meanwhile: fold again
                if retry:
                    failed = [w for w in session.failed_windows if tuple(w) != (start, end)]
                else:
                    failed = list(session.failed_windows)
                update: dict[str, Any] = {"extracted_upto": max(session.extracted_upto, end), "failed_windows": failed}
                if error:
                    update["failed_windows"] = [*failed, (start, end)]
                    update["last_error"] = error[:500]
                elif extraction is None:
                    update["windows_skipped"] = session.windows_skipped + 1
                else:
                    folded = self.folder.fold(namespace, session, msgs, extraction, verdicts)
                    out.extend(folded)  # conditional on the procedures it reinforced too
                    update["windows_done"] = session.windows_done + 1
                    update["summary"] = folded.summary
                    update["summary_updated_at"] = utcnow()
                    entry.update(folded.report)
                session = Session.model_validate({**session.model_dump(), **update, "updated_at": utcnow()})
                out.nodes.insert(0, session)
                out.vectors.insert(0, None)
                out.write(store, namespace, self.parts.embedder.dim)
                return True

        if not retried(write):
            return entry
        if error:
            self.counters.failed += 1
            entry["error"] = error
        elif extraction is None:
            self.counters.skipped += 1
        else:
            self.counters.windows += 1
        self.counters.messages += len(msgs)
        self.counters.seconds += time.perf_counter() - t0
        entry["seconds"] = round(time.perf_counter() - t0, 2)
        self.counters.log.append(entry)
        log.info("extracted window %s %s[%d:%d] in %.1f s", namespace, session_id, start, end, entry["seconds"])
        window_attributes(entry)
        return entry
