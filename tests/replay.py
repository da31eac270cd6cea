"""Recorded model outputs for deterministic extraction tests.

``ReplayExtractor`` answers a prompt with the reply the real model gave to exactly that prompt
when ``python -m tests.record_extractions`` last ran; a prompt it has not seen is an error,
never a made-up answer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from graphmem.extract.extractors import Completion

RECORDINGS = Path(__file__).parent / "data" / "recorded_extractions.json"


def prompt_key(system: str, user: str) -> str:
    return hashlib.sha256(f"{system}\x00{user}".encode()).hexdigest()[:16]


class ReplayExtractor:
    name = "replay"

    def __init__(self, path: Path = RECORDINGS, overrides: dict[str, list[str]] | None = None) -> None:
        self.recorded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        # text found in a window -> replies to give it, in order: hand-written replies for the
        # tests of malformed output and of rules the recordings do not reach
        self.overrides = overrides or {}
        self.calls: list[str] = []

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> Completion:
        self.calls.append(user)
        for needle, replies in self.overrides.items():
            if needle in user and replies:
                return Completion(replies.pop(0), 0, 0)
        rec = self.recorded.get(prompt_key(system, user))
        if rec is None:
            raise KeyError(f"no recorded reply for this window; run python -m tests.record_extractions:\n{user}")
        return Completion(rec["reply"], rec["prompt_tokens"], rec["output_tokens"])
