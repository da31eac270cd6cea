"""Which of a window's extracted memories are the window's own, read before the supersession
rules: the turns each comes from, whether it is the assistant's words, and its value or date
copied from what the turn left or from the prompt's date line."""

from __future__ import annotations

import re

from ..extract.checks import grounded, left_terms, unconfirmed_assistant_words
from ..extract.people import value_share
from ..extract.schema import ExtractedMemory, normalise_predicate
from ..models import Message
from ..text import keywords
from ..text.crosslingual import Across


_PAST_PREDICATE = re.compile(r"(^|_)(from|left|leaves|former|formerly|previous|previously|past|old|used|ex|moved?|moves|"
                             r"relocated?|relocates|transferred|switched|changed|sold|quit)(_|$)|以前|之前|原来")


def holds_what_was_left(m: ExtractedMemory, turns: list[Message]) -> str | None:
    """Why a memory is dropped when its value is what its turn says was left ("我从东莞搬去了惠州"
    read back as "works_at 东莞"), unless its predicate says so (``moved_from``, ``former_employer``)."""
    value = set(keywords(m.object or ""))
    if value and value <= left_terms(turns) and not _PAST_PREDICATE.search(normalise_predicate(m.predicate or "")):
        return f"its value {m.object!r} is what its turn says was left"
    return None


_LINE = re.compile(r"\s*\|\s*")


def as_words(text: str) -> str:
    """A memory the model wrote as the prompt writes known memories ("Amara does_activity |
    pilates", "唐慧 has_car | 理想") in plain words ("Amara does activity pilates"): its words stand,
    the line's bars and the predicate's underscores go."""
    if "|" not in text:
        return text
    return " ".join(re.sub(r"(?<=[A-Za-z])_(?=[A-Za-z])", " ", part) for part in _LINE.split(text) if part.strip())


def without_prompt_date(text: str, msgs: list[Message]) -> str:
    """A memory without the prompt's date line copied as when it began ("Jonah lives in Aurora
    since 2026-04-01", where the turn said only "We bought a house in Aurora"): the fact stands,
    the date no turn says goes."""
    day = _unsaid_day(msgs)
    if day is None or day not in text:
        return text
    return re.sub(rf"\s*,?\s*(?:since|as of|from|starting|on)\s+{day}\s*(?=[.!]?$)|(?:自|从|于){day}(?:起|开始)?",
                  "", text).strip()


def prompt_date(m: ExtractedMemory, msgs: list[Message]) -> str | None:
    """Why a memory is dropped when it states the date line of the prompt as a fact ("孙婷和何磊
    的日期是2026-04-01") that no turn says."""
    day = _unsaid_day(msgs)
    return "it states the prompt's date line" if day is not None and day in f"{m.text} {m.object or ''}" else None


def _unsaid_day(msgs: list[Message]) -> str | None:
    """The date line of the window's prompt, where no turn says that date itself."""
    day = f"{msgs[0].created_at:%Y-%m-%d}"
    return None if any(day in x.content for x in msgs) else day


def source_turns(m: ExtractedMemory, msgs: list[Message], most: int = 2) -> list[Message]:
    """The turns of the window a memory comes from. Candidates are the 1-2 turns sharing the
    most of its keywords (subject and object included; a speaker's own turns before the
    assistant's; where several people speak, a turn's speaker counts as named in it; only turns
    that state at least half of its object's words, where any does), or the whole window when
    none shares one (a paraphrase beyond recognition).
    The turns the model numbered are validated against them: those among the candidates are
    taken (the 1.5B model often numbers the turn before or after the right one), else the
    candidates are."""
    wanted = set(keywords(" ".join(x for x in (m.text, m.subject, m.object) if x)))
    speakers = {x.speaker: set(keywords(x.speaker)) for x in msgs if x.speaker and x.role != "assistant"}
    if len(speakers) < 2:  # one speaker: they say every turn alike
        speakers = {}
    value = sorted(set(keywords(m.object or "")) - set(keywords(m.subject or "")))
    scored = [(len(wanted & (set(x.keywords or keywords(x.content)) | speakers.get(x.speaker, set()))),
               x.role != "assistant", -i, x) for i, x in enumerate(msgs)]
    stating = [s for s in scored if value and value_share(value, s[3]) >= 0.5]
    scored = stating or scored  # the turns that state its value, where any does ("柴犬", not the turn beside it)
    best = max((s[0] for s in scored), default=0)
    candidates = list(msgs) if best == 0 else [
        s[3] for s in sorted((s for s in scored if s[0] * 2 >= best), key=lambda s: s[:3], reverse=True)[:most]]
    numbered = {msgs[n - 1].id for n in m.turns if 1 <= n <= len(msgs)}
    agreed = [x for x in candidates if x.id in numbered]
    return sorted(agreed or candidates, key=lambda x: x.seq)


def assistant_words(m: ExtractedMemory, turns: list[Message], msgs: list[Message], users: list[Message],
                     across: Across | None = None) -> bool:
    """A fact the user's turns do not hold, only the assistant's, and the user did not take up:
    whether the model cited the assistant's turn or, as it often does, the user's turn beside it
    ("可以听《文化有限》。" became "韩梅推荐《文化有限》" cited to her question; "推荐32G内存的MacBook
    Pro。" became "何琳考虑了内存和价格" cited to her "再看看吧，先比比价")."""
    if grounded(m.subject, m.object, m.text, users, across) is None:
        return False
    if not (turns and all(t.role == "assistant" for t in turns)):
        turns = [a for a in msgs if a.role == "assistant" and grounded(m.subject, m.object, m.text, [*users, a], across) is None]
    return unconfirmed_assistant_words(turns, msgs)
