"""Context assembly: the best of recall packed into a token budget, in the order
soul, memories, episodes, procedures, then the session's recent turns (L0) and its
rolling summary (L1)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..models import Context, ContextSection, Message, Procedure, Record, ScoredItem, Session, item_text
from ..text import TokenCounter
from .recall import RecallResult

_HEADERS = {
    "soul": "## Identity",
    "memories": "## Memories",
    "episodes": "## Episodes",
    "procedures": "## Procedures",
    "traces": "## Past runs",
    "recent": "## Recent conversation",
    "summary": "## Session summary",
}
_SECTION_OF_LAYER = {"memory": "memories", "message": "memories", "episode": "episodes", "procedure": "procedures",
                     "trace": "traces"}
_ORDER = ("soul", "memories", "episodes", "procedures", "traces", "recent", "summary")
_STEP_TOKENS = 16  # a step shortened to fit the budget keeps this many tokens


@dataclass
class _Block:
    lines: list[str]
    ids: list[str]
    tokens: int


def _stale(item: Record) -> str:
    """An old value never reads as current: a turn or episode that states one says what replaced it."""
    mark = item.value_of("superseded_by")
    return f" (superseded on {mark.at:%Y-%m-%d} by: {mark.text})".replace("\n", " ") if mark is not None else ""


def _line(s: ScoredItem) -> str:
    item = s.item
    text = item_text(item).replace("\n", " ") + _stale(item)
    if isinstance(item, Message):
        return f"- [{item.created_at:%Y-%m-%d}] {text}"
    return f"- {text}"


def _procedure(s: ScoredItem, room: int, counter: TokenCounter) -> str | None:
    """A procedure as its task and numbered steps in at most ``room`` tokens: whole if it fits,
    else with each step shortened, else with steps left out of the middle (never the first, the
    last or the matched one) under a line that says which; None when even that does not fit."""
    proc: Procedure = s.item
    head = f"- {proc.task}" + (f" (found by step {s.matched_step})" if s.matched_step else "") + ":"
    n = len(proc.steps)

    def render(texts: list[str], keep: list[int], note: str = "") -> str:
        lines, last = [head], 0
        for i in keep:
            if i > last + 1:
                lines.append(f"  … steps {last + 1}-{i - 1} of {n} left out to fit the token budget"
                             if i - 1 > last + 1 else f"  … step {last + 1} of {n} left out to fit the token budget")
            lines.append(f"  {i}. {texts[i - 1]}")
            last = i
        return "\n".join(lines + ([note] if note else []))

    whole = [st.text.replace("\n", " ") for st in proc.steps]
    keep = list(range(1, n + 1))
    text = render(whole, keep)
    if counter.count(text) <= room:
        return text
    short = [_truncate(t, _STEP_TOKENS, counter) for t in whole]
    note = "  (steps shortened to fit the token budget)" if short != whole else ""
    text = render(short, keep, note)
    while counter.count(text) > room:
        middle = [i for i in keep if i not in (1, n, s.matched_step)]
        if not middle:
            return None
        keep.remove(middle[len(middle) // 2])
        text = render(short, keep, note)
    return text


def _truncate(text: str, limit: int, counter: TokenCounter) -> str:
    if counter.count(text) <= limit:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix that fits, ellipsis included
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid] + "…") <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…" if lo else ""


def assemble(
    recalled: RecallResult,
    *,
    budget: int,
    counter: TokenCounter,
    soul: str = "",
    session: Session | None = None,
    recent: Sequence[Message] = (),
) -> Context:
    t0 = time.perf_counter()
    blocks: dict[str, _Block] = {}
    left = budget

    header_costs: dict[str, int] = {}

    def header_cost(name: str) -> int:  # header line and the blank line before the next section
        if name not in header_costs:
            header_costs[name] = counter.count(_HEADERS[name]) + 2
        return header_costs[name]

    def reserve(name: str, lines: list[str], ids: list[str], cap: int) -> None:
        nonlocal left
        if not lines or cap <= header_cost(name):
            return
        used, kept, kept_ids = header_cost(name), [], []
        for line, item_id in zip(lines, ids):
            cost = counter.count(line) + 1
            if used + cost > cap:
                break
            kept.append(line)
            kept_ids.append(item_id)
            used += cost
        if kept:
            blocks[name] = _Block(kept, kept_ids, used)
            left -= used

    if soul.strip():
        text = _truncate(soul.strip(), budget - header_cost("soul") - 1, counter)
        if text:
            reserve("soul", [text], [""], left)
    # L1 and L0 take at most a quarter of the budget each; knowledge gets the rest.
    if session is not None and session.summary.strip():
        summary = _truncate(session.summary.strip(), budget // 4 - header_cost("summary") - 1, counter)
        reserve("summary", [summary] if summary else [], [session.id], min(left, budget // 4))
    if recent:
        newest_first = list(reversed(recent))
        lines = [f"{m.speaker or m.role}: {m.said}{_stale(m)}".replace("\n", " ") for m in newest_first]
        reserve("recent", lines, [m.id for m in newest_first], min(left, budget // 4))
        if "recent" in blocks:  # keep the turns that fit, in conversation order
            blocks["recent"].lines.reverse()
            blocks["recent"].ids.reverse()

    in_recent = set(blocks["recent"].ids) if "recent" in blocks else set()
    chosen: list[ScoredItem] = []
    dropped = 0
    for s in recalled.items:  # best first
        if s.item.id in in_recent:
            continue
        name = _SECTION_OF_LAYER[s.layer]
        header = 0 if name in blocks else header_cost(name)
        line = _procedure(s, left - header - 1, counter) if isinstance(s.item, Procedure) else _line(s)
        cost = counter.count(line) + 1 + header if line is not None else left + 1
        if cost > left:
            dropped += 1
            continue
        block = blocks.setdefault(name, _Block([], [], header_cost(name)))
        block.lines.append(line)
        block.ids.append(s.item.id)
        block.tokens += cost - (header_cost(name) if len(block.lines) == 1 else 0)
        left -= cost
        chosen.append(s)

    parts = []
    sections = []
    for name in _ORDER:
        block = blocks.get(name)
        if block and block.lines:
            parts.append(_HEADERS[name] + "\n" + "\n".join(block.lines))
            sections.append(ContextSection(name=name, tokens=block.tokens, item_ids=[i for i in block.ids if i]))
    text = "\n\n".join(parts)
    tokens = counter.count(text)
    timings = dict(recalled.timings_ms)
    timings["assemble"] = (time.perf_counter() - t0) * 1000
    return Context(text=text, tokens=tokens, budget=budget, items=chosen, sections=sections, dropped=dropped,
                   timings_ms=timings)
