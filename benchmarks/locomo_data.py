"""LoCoMo loading shared by the benchmarks: turns with their ids, speakers and dates, and
questions with normalised evidence ids (see ../shared/bench/README.md for the quirks)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared/bench/locomo/locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass
class Turn:
    id: str
    session: str
    speaker: str
    text: str
    at: datetime


@dataclass
class Question:
    text: str
    category: int
    evidence: set[str]
    answer: str = ""  # the gold answer ("" for adversarial questions, which have none)


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


def evidence_ids(raw: list[str]) -> set[str]:
    """'D8:6; D9:17' splits, 'D:11:26' and 'D30:05' are mended; nothing is dropped silently."""
    out = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if m:
                out.add(f"D{m.group(1)}:{m.group(2)}")
    return out


def _when(value: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def load(path: Path = DEFAULT_PATH) -> list[Conversation]:
    out = []
    for conv in json.loads(Path(path).read_text(encoding="utf-8")):
        c = conv["conversation"]
        turns = []
        for key in sorted((k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
            at = _when(c[f"{key}_date_time"])
            for t in c[key]:
                text = t["text"]
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                turns.append(Turn(t["dia_id"], key, t["speaker"], text, at))
        questions = [Question(q["question"], q["category"], evidence_ids(q.get("evidence", [])),
                              str(q.get("answer", ""))) for q in conv["qa"]]
        out.append(Conversation(conv["sample_id"], turns, questions))
    return out
