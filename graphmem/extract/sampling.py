"""How the local model writes an extraction reply: greedy decoding under the schema's grammar,
made cheaper in two ways that keep every token the greedy choice.

1. The grammar is checked on the best token first. llama-cpp-python's sampler chain applies the
   grammar to every token of the vocabulary at each step (151,936 for the default Qwen2.5 model)
   before it takes the best one: about 14 % of a reply's CPU time on one thread (177 -> 153 ms a
   token, measured on recorded windows). When the best token of the whole vocabulary is allowed
   (nearly every step of a JSON reply: one refusal in 600 steps measured) it is the greedy
   choice, so the whole vocabulary is checked only when it is refused.
2. Drafts checked in one pass. A reply repeats its keys and separators and copies names and
   phrases from the window, so the tokens that follow the latest earlier occurrence of its last
   few tokens are often the next ones. They are decoded with the token just chosen in one batch
   (on one thread a batch of 8 costs about 2.8 single steps) and kept while each is the greedy
   choice at its place; the first that is not is replaced by the choice and the rest dropped.
   Batched arithmetic differs from one-token arithmetic in the last bits, so a near-tie can
   fall the other way: the reply is still greedy, not always byte-identical.
   Whether that pays depends on the machine (``drafts_pay``): where one token's pass is mostly
   reading the weights, a batch costs little more than one token; where it is mostly arithmetic
   (a fast memory bus, one thread), every drafted token costs nearly a token's pass and the
   refused ones are lost. By default the first call that may draft times passes of one and four
   tokens and drafts only where that saves CPU.

One choice is not greedy: a list is never continued after an item that repeats an earlier one
(``RepeatGuard``). A small model that loops writes the same memory or step until the list or the
token limit is full, and a reply cut at the limit fails twice (greedy decoding loops the same way
on the retry): on MemoryBank a Chinese window wrote one memory seven times, then its workflow's
steps, 700 tokens on each of two attempts, and lost the window.
"""

from __future__ import annotations

import ctypes
import logging
import statistics
import time
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


class RepeatGuard:
    """Follows a JSON reply byte by byte and tells whether a piece of it would continue a list
    after an item that repeats an earlier item of the same list: a string, an object by its
    first member's value (a memory's text, an entity's name, a workflow's task), or a list of
    values by its first value (a memory written as one, as in a cost trial,
    ``benchmarks/trials/lean_prompt.py positional``). Numbers and
    other values are never repeats (a memory may cite turn 3 beside turn 3 of another). Nor may
    a string go on once it ends in the same phrase three times over (a reasoning that wrote
    "不再骑车了，" until the limit): only a piece that ends the string or breaks the run fits.
    A run broken by a character changed now and then is still a loop: once the string's last
    24 bytes have been written three times in it, only a piece that ends the string fits (a
    reasoning and then an episode went round "王锋分享职业方向，王峰表达孤独感和寻求支持，" with
    峰 and 锋 swapped every other time, to the token limit)."""

    def __init__(self) -> None:
        self.text = bytearray()
        self.frames: list[dict[str, Any]] = []  # open lists {"seen", "repeat"} and objects {"key", "member", "first"}
        self.in_string, self.escaped, self.opened_at = False, False, 0
        self.overrides = 0  # choices the guard changed

    def fits(self, piece: bytes) -> bool:
        """Whether ``piece`` can follow without continuing a list after a repeat or a string
        that runs in a loop."""
        if self.in_string:
            text = bytes(self.text[self.opened_at + 1:])
            if _loops(text):  # only a piece that ends the string fits
                if b'"' not in piece:
                    return False
                trial = self._copy()
                return trial.feed(piece) and not (trial.in_string and trial.opened_at == self.opened_at)
            if b'"' not in piece and b"\\" not in piece:  # text inside a string: nothing ends
                return not _runs(text + piece)
        return self._copy().feed(piece)

    def feed(self, piece: bytes) -> bool:
        """Take ``piece`` into the state; False where it continues a list after a repeat."""
        fine = True
        for byte in piece:
            at = len(self.text)
            self.text.append(byte)
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif byte == 0x5C:  # backslash
                    self.escaped = True
                elif byte == 0x22:  # the closing quote
                    self.in_string = False
                    top = self.frames[-1] if self.frames else None
                    if top is not None and "key" in top and top["key"]:
                        top["key"] = False  # a key ends: its value follows
                    else:
                        self._ended(bytes(self.text[self.opened_at:at + 1]))
            elif byte == 0x22:
                self.in_string, self.opened_at = True, at
            elif byte == 0x7B:  # {
                self.frames.append({"key": True, "member": 0, "first": None})
            elif byte == 0x5B:  # [: a list nested in a list is one item, written as a list of values
                values = bool(self.frames) and "seen" in self.frames[-1]
                self.frames.append({"seen": set(), "repeat": False, "first": None, "values": values, "named": False})
            elif byte in (0x7D, 0x5D):  # } ]
                if self.frames:
                    closed = self.frames.pop()
                    self._ended(closed.get("first"))
            elif byte == 0x2C and self.frames:  # ,
                top = self.frames[-1]
                if "seen" in top:
                    fine = fine and not top["repeat"]
                else:
                    top["key"], top["member"] = True, top["member"] + 1
        return fine and not (self.in_string and _runs(bytes(self.text[self.opened_at + 1:])))

    def _ended(self, identity: bytes | None) -> None:
        """A value ended; ``identity`` is what makes it a repeat (None: never one)."""
        if not self.frames:
            return
        top = self.frames[-1]
        if top.get("values"):  # its values may repeat each other; the first one names it
            if not top["named"]:
                top["first"], top["named"] = identity, True
        elif "seen" in top:
            if identity is not None:
                top["repeat"] = identity in top["seen"]
                top["seen"].add(identity)
            else:
                top["repeat"] = False
        elif top["member"] == 0:
            top["first"] = identity

    def _copy(self) -> "RepeatGuard":
        trial = RepeatGuard.__new__(RepeatGuard)
        trial.text = bytearray(self.text)
        trial.frames = [{**f, "seen": set(f["seen"])} if "seen" in f else dict(f) for f in self.frames]
        trial.in_string, trial.escaped, trial.opened_at, trial.overrides = (
            self.in_string, self.escaped, self.opened_at, self.overrides)
        return trial


def _loops(text: bytes, phrase: int = 24) -> bool:
    """Whether ``text`` has written its last ``phrase`` bytes three times. None of the 3,854
    strings of the recorded replies CI replays has; of some 17,000 of MemoryBank and live
    labelled-set replies, only two strings that looped to their length limit."""
    return len(text) >= 3 * phrase and text.count(text[-phrase:]) >= 3


def _runs(text: bytes, shortest: int = 6, longest: int = 90) -> bool:
    """Whether ``text`` ends in one phrase of ``shortest`` to ``longest`` bytes three times over."""
    for n in range(shortest, min(longest, len(text) // 3) + 1):
        if text[-n:] == text[-2 * n:-n] == text[-3 * n:-2 * n]:
            return True
    return False


_LOOSE_CHAR = r'char ::= [^"\\] |'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'  # as llama.cpp's own converter has it


def json_strings(grammar: str) -> str:
    """``grammar`` with its JSON strings as JSON has them: llama-cpp-python's JSON-schema grammar
    lets a string hold raw control characters, which JSON forbids and ``json.loads`` refuses. A
    Chinese MemoryBank window went on from its reasoning line into a newline and a Markdown
    code fence, to the token limit, and failed twice (1,377 output tokens, nothing stored).
    Greedy decoding writes every reply without one token for token as before."""
    return grammar.replace(_LOOSE_CHAR, _JSON_CHAR)


class GrammarFirstGreedy:
    """A sampler for ``Llama`` (it answers ``sample(ctx, idx)`` like llama-cpp-python's own):
    temperature 0, no penalties, one grammar; with ``guard``, a list is not continued after a
    repeated item (the best allowed token that does not is taken instead)."""

    def __init__(self, vocab: Any, grammar: str, root: str, n_vocab: int, *, guard: bool = False) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._grammar = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), root.encode("utf-8"))
        if not self._grammar:
            raise ValueError("llama.cpp could not parse the grammar")
        self.n_vocab = n_vocab
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self._all = (llama_cpp.llama_token_data * n_vocab)()
        self._all_view = np.frombuffer(self._all, dtype=_TOKEN_DATA)
        self._all_array = llama_cpp.llama_token_data_array(data=self._all, size=n_vocab, selected=-1, sorted=False)
        self.steps = 0
        self.full_checks = 0  # steps whose best token the grammar (or the guard) refused
        self.guard = RepeatGuard() if guard else None
        self._vocab, self._pieces, self._piece_buf = vocab, {}, ctypes.create_string_buffer(64)

    def piece(self, token: int) -> bytes:
        """The bytes ``token`` writes (a special token writes none)."""
        out = self._pieces.get(token)
        if out is None:
            n = self._lib.llama_token_to_piece(self._vocab, token, self._piece_buf, 64, 0, False)
            out = self._pieces[token] = self._piece_buf.raw[:max(0, n)]
        return out

    def allowed(self, token: int) -> bool:
        """Whether the grammar, in its present state, allows ``token`` next."""
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_array.size = 1
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(self._one_array))
        return bool(np.isfinite(self._one[0].logit))

    def choose(self, logits: np.ndarray) -> int:
        """The highest-scoring token the grammar allows (the first such on ties, as llama.cpp's
        greedy sampler), taken into the grammar's state."""
        self.steps += 1
        guard = self.guard
        token = int(np.argmax(logits))
        if not self.allowed(token) or (guard is not None and not guard.fits(self.piece(token))):
            self.full_checks += 1
            view = self._all_view
            view["id"] = np.arange(self.n_vocab, dtype=np.int32)
            view["logit"] = logits
            self._all_array.size = self.n_vocab
            self._lib.llama_sampler_apply(self._grammar, ctypes.byref(self._all_array))  # refused: -inf
            token = int(np.argmax(view["logit"]))
            if guard is not None and not guard.fits(self.piece(token)):
                guard.overrides += 1
                allowed = np.flatnonzero(np.isfinite(view["logit"]))
                ranked = allowed[np.argsort(-view["logit"][allowed], kind="stable")]
                token = next((int(t) for t in ranked if guard.fits(self.piece(int(t)))), token)
        if guard is not None:
            guard.feed(self.piece(token))
        self._lib.llama_sampler_accept(self._grammar, token)
        return token

    def sample(self, ctx: Any, idx: int = -1) -> int:
        logits = np.ctypeslib.as_array(self._lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        return self.choose(logits)

    def __del__(self) -> None:
        if getattr(self, "_grammar", None):
            self._lib.llama_sampler_free(self._grammar)
            self._grammar = None


class LookupDrafter:
    """Draft tokens for a reply from what came before: the continuation of the most recent
    earlier occurrence of its last 4 (else 3, else 2) tokens, in the prompt or the reply so far.
    A JSON reply repeats its keys and separators and copies names and phrases from the window,
    so most drafts are taken. The draft grows while drafts are taken whole and shrinks to what
    was taken when one is cut (a refused draft token costs a little, a taken one saves a pass)."""

    def __init__(self, prompt: list[int], *, longest: int = 4, shortest: int = 2, most: int = 12) -> None:
        self.sizes = range(longest, shortest - 1, -1)
        self.most, self.size = most, 4
        self.passes = self.drafted = self.taken_in_all = 0
        self.tokens: list[int] = []
        self._next: dict[tuple[int, ...], int] = {}  # n-gram -> where its latest continuation starts
        self.extend(prompt)

    def extend(self, tokens: list[int]) -> None:
        for token in tokens:
            self.tokens.append(token)
            end = len(self.tokens) - 1  # the n-grams that end just before the new token continue with it
            for n in self.sizes:
                if end >= n:
                    self._next[tuple(self.tokens[end - n:end])] = end

    def draft(self) -> list[int]:
        for n in self.sizes:
            at = self._next.get(tuple(self.tokens[-n:]))
            if at is not None:
                return self.tokens[at:at + self.size]
        return []

    def taken(self, drafted: int, taken: int) -> None:
        self.passes, self.drafted, self.taken_in_all = self.passes + 1, self.drafted + drafted, self.taken_in_all + taken
        self.size = min(self.most, self.size + 2) if drafted and taken == drafted else max(1, taken)


# The shipped drafter on the real model's recorded replies to the labelled windows: 0.546
# passes and 1.32 decoded tokens per reply token (`python benchmarks/trials/draft_lookup.py`).
DRAFT_PASSES, DRAFT_DECODED = 0.546, 1.32
DRAFT_MOST = 12  # most tokens drafted per pass where drafts pay


def drafts_pay(one_ms: float, four_ms: float) -> bool:
    """Whether drafted passes save CPU where a pass of one token costs ``one_ms`` and a pass of
    four ``four_ms``. A pass of n tokens costs about a + b·n (a: reading the weights, b: each
    token's arithmetic); decoding with drafts costs DRAFT_PASSES·a + DRAFT_DECODED·b a reply token
    against a + b without. Measured on one thread: 61 / 211 ms on a machine with a fast memory bus
    (b three times a: drafts cost 20 % more); where drafts were first measured a batch of 8 cost
    2.8 single steps (a about three times b, four tokens about 1.8 single steps: they saved 16 %)."""
    b = (four_ms - one_ms) / 3
    a = one_ms - b
    return b <= 0 or DRAFT_PASSES * a + DRAFT_DECODED * b < a + b


@cache
def grammar_first_llama_class() -> type:
    """``llama_cpp.Llama`` whose greedy, penalty-free, grammar-constrained calls (every
    extraction call) sample with ``GrammarFirstGreedy`` and, when ``draft_tokens`` > 0, decode
    drafts from ``LookupDrafter`` several tokens to a pass, keeping the tokens greedy decoding
    chooses; any other call samples as before."""
    import llama_cpp
    from llama_cpp import Llama

    def plain(kw: dict[str, Any]) -> bool:
        return (kw.get("grammar") is not None and kw.get("temp") == 0.0 and kw.get("repeat_penalty", 1.0) == 1.0
                and not kw.get("frequency_penalty") and not kw.get("presence_penalty")
                and kw.get("logits_processor") is None)

    class GrammarFirstLlama(Llama):
        draft_tokens: int | None = None  # most tokens drafted per pass; 0: one token a pass; None: as drafts pay
        drafts_pay: bool | None = None  # measured by the first call that may draft, when draft_tokens is None
        repeat_guard = True  # a list is not continued after a repeated item (``RepeatGuard``)
        last_drafter: LookupDrafter | None = None  # the last drafted call's, with its counts

        def _init_sampler(self, **kw: Any):
            if not plain(kw):
                return super()._init_sampler(**kw)
            grammar = kw["grammar"]
            return GrammarFirstGreedy(self._model.vocab, json_strings(grammar._grammar), grammar._root, self._n_vocab,
                                      guard=self.repeat_guard)

        def generate(self, tokens, **kw: Any):
            self._batch_threads(self.n_threads_batch)  # as configured, whatever a call before left
            most = self._most_drafted(tokens) if plain(kw) and self.draft_model is None else 0
            if most <= 0:
                return super().generate(tokens, **kw)
            return self._drafted(list(tokens), self._init_sampler(**kw), kw.get("stopping_criteria"), most)

        def _most_drafted(self, tokens) -> int:
            if self.draft_tokens is not None:
                return self.draft_tokens
            if self.drafts_pay is None and len(tokens) >= 4 and self.n_tokens + 4 < self._n_ctx:
                one, four = self._pass_ms(list(tokens[:1]), list(tokens[:4]))
                self.drafts_pay = drafts_pay(one, four)
                log.info("llama.cpp: a pass of one token %.0f CPU ms, of four %.0f: drafts %s", one, four,
                         "on" if self.drafts_pay else "off")
            return DRAFT_MOST if self.drafts_pay else 0

        def _pass_ms(self, *batches: list[int]) -> list[float]:
            """CPU ms of one pass of each batch after the cached tokens on the generation threads, as
            a drafted pass runs: the median of three rounds, the batches in turn within each round,
            so that a burst of load from another process weighs on every size alike (timed one size
            after the other, a burst during the one-token passes once read 99 ms against 48 and
            turned drafts on); the cache is left as it was."""
            base, runs = self.n_tokens, [[] for _ in batches]
            with self._generation_threads():
                for _ in range(3):
                    for batch, times in zip(batches, runs):
                        c = time.process_time()
                        self._decode_all(batch)
                        times.append((time.process_time() - c) * 1000)
                        self._keep(base)
            return [statistics.median(times) for times in runs]

        def _batch_threads(self, n: int) -> None:
            llama_cpp.llama_set_n_threads(self._ctx.ctx, self.n_threads, n)

        @contextmanager
        def _generation_threads(self):
            """Batches run on the generation threads while open, on the configured batch
            threads after."""
            self._batch_threads(self.n_threads)
            try:
                yield
            finally:
                self._batch_threads(self.n_threads_batch)

        def _keep(self, n: int) -> None:
            """Only the first ``n`` cached tokens stay, in ``n_tokens`` and in the KV cache."""
            self.n_tokens = n
            self._ctx.kv_cache_seq_rm(-1, n, -1)

        def _decode_all(self, batch: list[int]) -> None:
            """Decode ``batch`` after the cached tokens with logits at every position."""
            self._batch.set_batch(batch=batch, n_past=self.n_tokens, logits_all=True)
            self._ctx.decode(self._batch)
            self.input_ids[self.n_tokens:self.n_tokens + len(batch)] = batch
            self.n_tokens += len(batch)

        def _drafted(self, prompt: list[int], sampler: GrammarFirstGreedy, stop: Any, most: int):
            """``generate`` for a plain greedy grammar call, with drafts of up to ``most`` tokens.
            ``stop`` sees the tokens before each new one, as in ``Llama.generate``."""
            same = 0
            for a, b in zip(self.input_ids[:self.n_tokens], prompt):
                if a != b:
                    break
                same += 1
            self.n_tokens = min(same, len(prompt) - 1)  # the prompt's last token is decoded again for its logits
            self.eval(prompt[self.n_tokens:])
            # A drafted pass is a few tokens: it runs on the generation threads, as a one-token step
            # would. On the batch threads (all cores) every pass waits for a core another process
            # holds, and ggml's threads spin while they wait: a 121-token reply beside one busy process
            # took 67 s (71 CPU s) that way against 18 s here, and 22 s with one token a pass.
            with self._generation_threads():
                yield from self._drafts(prompt, sampler, stop, most)

        def _drafts(self, prompt: list[int], sampler: GrammarFirstGreedy, stop: Any, most: int):
            drafter = self.last_drafter = LookupDrafter(prompt, most=most)
            token = sampler.sample(self._ctx, -1)
            while True:
                if stop is not None and stop(np.asarray(drafter.tokens), None):
                    return
                yield token
                drafter.extend([token])
                draft = drafter.draft()[: max(0, self._n_ctx - self.n_tokens - 1)]
                past = self.n_tokens
                self._decode_all([token, *draft])
                taken = 0
                for j in range(len(draft) + 1):
                    token = sampler.sample(self._ctx, j)
                    if j == len(draft) or token != draft[j]:
                        break
                    taken += 1
                    if stop is not None and stop(np.asarray(drafter.tokens), None):
                        return
                    yield token
                    drafter.extend([token])
                drafter.taken(len(draft), taken)
                if past + taken + 1 < self.n_tokens:  # the refused draft leaves the cache
                    self._keep(past + taken + 1)

    return GrammarFirstLlama
