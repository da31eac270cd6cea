"""Re-record the real model's replies to the test conversations (needs the [llm] extra;
a few minutes). Run it after changing the prompt, the schema or the test conversations:

    python -m tests.record_extractions
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from graphmem import Memory
from graphmem.extract import default_model_path
from graphmem.extract.extractors import Completion, LlamaExtractor
from graphmem.settings import Settings

from .extraction_windows import ingest
from .replay import RECORDINGS, prompt_key


class Recorder:
    name = "recorder"

    def __init__(self, inner) -> None:
        self.inner = inner
        self.out: dict[str, Any] = {}

    def complete(self, system: str, user: str, schema: dict[str, Any], max_tokens: int) -> Completion:
        t0 = time.perf_counter()
        reply = self.inner.complete(system, user, schema, max_tokens)
        print(f"{time.perf_counter() - t0:.1f} s, {reply.prompt_tokens} prompt and {reply.output_tokens} output tokens")
        print(user, "\n->", reply.text, "\n", flush=True)
        self.out[prompt_key(system, user)] = {"user": user, "reply": reply.text, "prompt_tokens": reply.prompt_tokens,
                                              "output_tokens": reply.output_tokens}
        return reply


def main() -> None:
    settings = Settings(extraction="manual")
    recorder = Recorder(LlamaExtractor(default_model_path(settings.cache_dir / "models")))
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "rec.db", settings=settings, extractor=recorder) as mem:
        ingest(mem)
    RECORDINGS.write_text(json.dumps(recorder.out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
