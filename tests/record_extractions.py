"""Re-record the real model's replies to the test conversations (needs the [llm] extra;
a few minutes). Run it after changing the prompt, the schema or the test conversations:

    python -m tests.record_extractions

With ``--missing`` only the prompts without a recorded reply are asked (a new question the
engine asks, such as ``graphmem.extract.judge``'s), and the recorded replies stay as they are.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from graphmem import Memory
from graphmem.engine.extraction import make_extractor
from graphmem.scripts import RecordingExtractor, Recordings
from graphmem.settings import Settings

from graphmem.scripts.sample import ingest
from .replay import RECORDINGS


def main() -> None:
    settings = Settings(extraction="manual")
    recordings = Recordings(RECORDINGS)
    recorder = RecordingExtractor(recordings, make_extractor(settings), refresh="--missing" not in sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "rec.db", settings=settings, extractor=recorder) as mem:
        ingest(mem)
    recordings.save(only_used=True)


if __name__ == "__main__":
    main()
