"""Does a window end what a stored memory says? The model asked about one pair at a time.

The rules (``graphmem.lifecycle.rules``) catch a change phrased as they were written for; a
change phrased another way ("We bought a house in Aurora and left the downtown flat", "电动车被
偷了，现在坐公交上班") leaves the old memory standing. So a window whose user turns signal a
change (a change cue or "now", and neither "besides" nor "still") has the speaker's stored
memories closest to those turns (their clauses one by one where one says several things) put to
the model, each as one short question: does the new message say this note is no longer true? The
answer is read as a probability, the share of "yes" among the first token's "yes" and "no",
not as a sampled word: the 1.5B model's greedy answer is "yes" for most pairs, its probability
separates them (area under the curve 0.96 on the 40 tuned cases' 140 pairs). Only the window's
most probable pair can retire a memory, and only at ``JUDGE_AT`` or above, or a little below
where it stands clear of the others (``ends``; ``graphmem.lifecycle.fold``); the threshold was
read on the tuned cases alone, the held-out batches measure it (docs/benchmarks.md, *Asking the
model about a pair*)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..models import MemoryRecord, Message
from .checks import adds_a_value, is_past_or_changed, keeps_a_value

JUDGE_AT = 0.75  # the lowest probability that retires a memory on its own
# ... or, lower, when it stands clear of the window's other memories: the model's "yes" runs high
# for every note of some messages, so a pair it singles out is a reading too (read on the tuned
# cases and held-out batches 1-8; docs/benchmarks.md, "Batches 9-11, and the rules read from batch 8")
JUDGE_CLEAR_AT, JUDGE_MARGIN = 0.70, 0.12


def ends(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The pair a window's questions read as ended: the likeliest, at ``JUDGE_AT`` or more, or at
    ``JUDGE_CLEAR_AT`` or more and ``JUDGE_MARGIN`` above every other memory's; else None."""
    best = max(verdicts, key=lambda v: v.p, default=None)
    if best is None or best.p < JUDGE_CLEAR_AT:
        return None
    if best.p >= JUDGE_AT:
        return best
    others = [v.p for v in verdicts if v.memory_id != best.memory_id]
    return best if others and best.p - max(others) >= JUDGE_MARGIN else None
JUDGE_SYSTEM = ("You compare a stored note about a person with a new message from that person. Answer yes only if "
                "the new message says the note is no longer true (the person changed it, stopped it, left it, or "
                "replaced it with something else). Otherwise answer no.")
_NOW = re.compile(r"\b(now|these days|nowadays|no longer)\b|现在|如今|最近|目前", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """The model's probability that the window ends ``note``: a stored memory's whole text, or
    one of its clauses (``clause``: its index among the memory's clauses)."""

    memory_id: str
    note: str
    p: float
    clause: int | None = None


NOTE_LINE = '\nStored note: '  # where one window's questions start to differ


def judge_prompt(speaker: str, said: str, note: str) -> str:
    return f'New message from {speaker}: "{said}"{NOTE_LINE}"{note}"\nDoes the new message say the stored note is no longer true?'


def signals_a_change(turns: Sequence[Message]) -> bool:
    """The user's turns say something changed ("left", "sold", "now", "现在", "不再") and neither
    add a value beside the held ones ("besides", "除了") nor say one stays ("still", "还是"): the
    windows worth a question about each stored memory."""
    said = [m.content for m in turns if m.role != "assistant"]
    return (any(is_past_or_changed(t) or _NOW.search(t) for t in said) and not adds_a_value(turns)
            and not any(keeps_a_value(t) for t in said))


def yes_share(logprobs: Mapping[str, float]) -> float | None:
    """The share of "yes" in the probability of "yes" and "no" (any case, any surrounding space)
    among a first token's candidates, given as token -> log probability (up to one constant);
    None when neither is among them."""
    yes = sum(math.exp(lp) for tok, lp in logprobs.items() if tok.strip().casefold() == "yes")
    no = sum(math.exp(lp) for tok, lp in logprobs.items() if tok.strip().casefold() == "no")
    return yes / (yes + no) if yes + no > 0 else None


def notes_of(memory: MemoryRecord, clauses: Sequence[str]) -> list[tuple[str, int | None]]:
    """What is asked about one memory: its whole text, or each clause as its own sentence."""
    return [(memory.text, None)] if len(clauses) < 2 else [(c, i) for i, c in enumerate(clauses)]


def judge_window(ask: Any, turns: Sequence[Message], speaker: str,
                 notes: Iterable[tuple[str, str, int | None]]) -> list[Verdict]:
    """``ask(system, user) -> float | None`` for each (memory id, note, clause) of ``notes``;
    the pairs it answers, as verdicts."""
    said = " ".join(" ".join(m.content.split()) for m in turns if m.role != "assistant")
    out = []
    for memory_id, note, clause in notes:
        p = ask(JUDGE_SYSTEM, judge_prompt(speaker, said, note))
        if p is not None:
            out.append(Verdict(memory_id, note, float(p), clause))
    return out


class SideContext:
    """A second llama.cpp context on a loaded model's own weights (nothing loaded or repacked
    again: about 50 MB of KV cache and buffers), for short questions; the extraction context
    keeps its system prompt in its KV cache. A question is evaluated in two fixed parts, all of
    it up to ``split`` in the user's text, then the rest, and the first part is kept for the next
    question that starts the same way (one window's questions differ in their note only). Fixed,
    because llama.cpp's arithmetic depends on how tokens are batched: a question evaluated after
    whatever happened to be cached read up to 0.035 apart from the same question asked first."""

    def __init__(self, llm: Any, split: str, n_ctx: int = 1024) -> None:
        from llama_cpp import _internals

        params = type(llm.context_params).from_buffer_copy(llm.context_params)  # its threads, types and batch
        params.n_ctx = n_ctx
        n_batch = min(params.n_batch, n_ctx)
        params.n_batch, params.n_ubatch = n_batch, min(params.n_ubatch, n_batch)
        self.llm, self.split, self.n_batch = llm, split, n_batch
        self.ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.batch = _internals.LlamaBatch(n_tokens=n_batch, embd=0, n_seq_max=1, verbose=False)
        self.head: list[int] = []  # the first part of the last question: what the KV cache holds

    def yes_probability(self, system: str, user: str) -> float | None:
        """The share of "yes" in the first answer token of the chat prompt (the GGUF's own template)."""
        import numpy as np

        llm = self.llm
        prompt = chat_prompt(llm, system, user)
        cut = prompt.find(self.split) if self.split else -1
        head = llm.tokenize(prompt[:cut].encode("utf-8"), add_bos=False, special=True) if cut > 0 else []
        tail = llm.tokenize(prompt[max(cut, 0):].encode("utf-8"), add_bos=False, special=True)
        if len(head) + len(tail) >= self.ctx.n_ctx() or not tail:
            return None  # a question longer than the context: the rules decide
        if head != self.head:
            self.ctx.kv_cache_clear()
            self._decode(head, 0)
            self.head = head
        else:
            self.ctx.kv_cache_seq_rm(-1, len(head), -1)
        self._decode(tail, len(head))
        logits = np.ctypeslib.as_array(self.ctx.get_logits(), shape=(llm.n_vocab(),))
        top = np.argsort(-logits)[:20]
        peak = float(logits[top[0]])
        scores: dict[str, float] = {}
        for t in top:
            piece = llm.detokenize([int(t)]).decode("utf-8", errors="ignore")
            scores[piece] = max(scores.get(piece, -math.inf), float(logits[t]) - peak)
        return yes_share(scores)  # log probabilities up to one constant: the share is the same

    def _decode(self, tokens: list[int], start: int) -> None:
        for i in range(0, len(tokens), self.n_batch):
            chunk = tokens[i:i + self.n_batch]
            self.batch.set_batch(chunk, n_past=start + i, logits_all=False)
            self.ctx.decode(self.batch)


def chat_prompt(llm: Any, system: str, user: str) -> str:
    """The chat prompt as the GGUF's template writes it, up to where the reply begins."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        return f"{system}\n\n{user}\nAnswer: "
    eos, bos = llm.token_eos(), llm.token_bos()
    formatter = Jinja2ChatFormatter(template=template, eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
                                    bos_token=llm._model.token_get_text(bos) if bos != -1 else "")
    return formatter(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}]).prompt
