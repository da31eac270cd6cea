"""Recorded model replies: replay what the real model said to exactly the same prompt."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..extract.extractors import Completion, Extractor


def prompt_key(system: str, user: str) -> str:
    return hashlib.sha256(f"{system}\x00{user}".encode()).hexdigest()[:16]


class Recordings:
    """prompt key -> {user, reply, prompt_tokens, output_tokens}, kept in a JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.data: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
        self.used: set[str] = set()

    def save(self, only_used: bool = True) -> None:
        data = {k: v for k, v in self.data.items() if k in self.used} if only_used else self.data
        self.path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    def replay(self, key: str) -> Completion:
        """The recorded reply for ``key`` (marked as used)."""
        self.used.add(key)
        rec = self.data[key]
        return Completion(rec["reply"], rec.get("prompt_tokens", 0), rec.get("output_tokens", 0))


class RecordingExtractor:
    """Answers from the recordings; a prompt not recorded goes to ``live`` (and is recorded)
    when one is given, and is an error otherwise: never a made-up reply."""

    name = "recorded"

    def __init__(self, recordings: Recordings, live: Extractor | None = None, *, refresh: bool = False) -> None:
        self.recordings = recordings
        self.live = live
        self.refresh = refresh  # ask the live model even for recorded prompts

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        key = prompt_key(system, user)
        self.recordings.used.add(key)
        if key in self.recordings.data and not (self.refresh and self.live is not None):
            return self.recordings.replay(key)
        if self.live is None:
            raise ConfigurationError(
                f"no recorded model reply for this window in {self.recordings.path}; run the scripts with "
                f"--record to ask the local model:\n{user}"
            )
        out = self.live.complete(system, user, schema, max_tokens, stop=stop)
        self.recordings.data[key] = {"user": user, "reply": out.text, "prompt_tokens": out.prompt_tokens,
                                     "output_tokens": out.output_tokens}
        return out

    def yes_probability(self, system: str, user: str) -> float | None:
        """The recorded answer to a yes/no question (``graphmem.extract.judge``): the probability
        the model gave "yes", written with four decimals ("" where it gave none)."""
        key = prompt_key(system, user)
        self.recordings.used.add(key)
        if key in self.recordings.data and not (self.refresh and self.live is not None):
            reply = self.recordings.data[key]["reply"]
            return float(reply) if reply else None
        ask = getattr(self.live, "yes_probability", None)
        if self.live is None:
            raise ConfigurationError(
                f"no recorded model answer for this question in {self.recordings.path}; run the scripts with "
                f"--record to ask the local model:\n{user}"
            )
        p = ask(system, user) if ask is not None else None
        p = None if p is None else round(p, 4)  # as it is recorded: a replay decides the same
        self.recordings.data[key] = {"user": user, "reply": "" if p is None else f"{p:.4f}", "prompt_tokens": 0,
                                     "output_tokens": 1}
        return p
