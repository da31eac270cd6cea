"""Recorded model outputs for deterministic extraction tests.

``ReplayExtractor`` answers a prompt with the reply the real model gave to exactly that prompt
when ``python -m tests.record_extractions`` last ran; a prompt it has not seen is an error,
never a made-up answer. ``overrides`` hand-write replies for the tests of malformed output and
of rules the recordings do not reach; ``answers`` hand-write the model's yes/no probabilities
(``graphmem.extract.judge``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphmem.extract.extractors import Completion
from graphmem.scripts import RecordingExtractor, Recordings
from graphmem.scripts.sample import RECORDINGS


class ReplayExtractor(RecordingExtractor):
    name = "replay"

    def __init__(self, path: Path = RECORDINGS, overrides: dict[str, list[str]] | None = None,
                 answers: dict[str, float] | None = None) -> None:
        super().__init__(Recordings(path))
        self.overrides = overrides or {}  # text found in a window -> replies to give it, in order
        self.answers = answers or {}  # text found in a yes/no question -> the probability of "yes"
        self.calls: list[str] = []
        self.questions: list[str] = []

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int,
                 stop: Sequence[str] = ()) -> Completion:
        self.calls.append(user)
        for needle, replies in self.overrides.items():
            if needle in user and replies:
                return Completion(replies.pop(0), 0, 0)
        return super().complete(system, user, schema, max_tokens, stop)

    def yes_probability(self, system: str, user: str) -> float | None:
        self.questions.append(user)
        for needle, p in self.answers.items():
            if needle in user:
                return p
        return super().yes_probability(system, user)
