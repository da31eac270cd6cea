"""Extraction cost per 1,000 messages on MemoryBank's companion chats, English and Chinese,
through the whole pipeline (``Memory.add_messages`` then ``Memory.extract``) with the local model.

    python benchmarks/extraction.py [--memorybank ../shared/bench/memorybank/eval_data] [--messages 64]

The first users' days are written in order until ``--messages`` messages per language; then every
queued window is extracted. CPU seconds are this process's CPU time over the extraction (the
model's threads included; the model is loaded and the fixed system prompt evaluated before the
clock starts: a process pays both once), wall seconds beside them. It uses the public API, the
settings' defaults and the extractor's ``complete``, so the same script measures an older
checkout (run it from that checkout) for a before/after figure. Quality is measured apart, on the
labelled set: benchmarks/extraction_quality.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphmem import Memory  # noqa: E402
from graphmem.engine.extraction import make_extractor  # noqa: E402
from graphmem.extract.extractors import SYSTEM_PROMPT, LlamaExtractor  # noqa: E402
from graphmem.extract.schema import WIRE_SCHEMA  # noqa: E402
from graphmem.settings import Settings  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared/bench/memorybank/eval_data"
FILES = {"en": "en/memory_bank_en.json", "zh": "cn/memory_bank_cn.json"}


def sessions(path: Path, limit: int) -> list[tuple[str, list[dict]]]:
    """(session id, messages) for each user-day, in order, until ``limit`` messages."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out, total = [], 0
    for name, user in data.items():
        for day, turns in user["history"].items():
            msgs = []
            for turn in turns:
                for who, text in ((name, turn.get("query")), ("assistant", turn.get("response"))):
                    if text and text.strip():
                        msgs.append({"speaker": who, "role": "assistant" if who == "assistant" else "user",
                                     "content": text.strip(), "created_at": f"{day}T12:{len(msgs):02d}:00Z"})
            if msgs:
                out.append((f"{name}-{day}", msgs))
                total += len(msgs)
            if total >= limit:
                return out
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memorybank", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--messages", type=int, default=64, help="messages per language")
    args = ap.parse_args()
    settings = Settings(extraction="manual")
    extractor = make_extractor(settings)  # the local model unless GRAPHMEM_LLM_BASE_URL names a server
    if isinstance(extractor, LlamaExtractor):
        extractor._llm()  # the load is not a per-message cost
    # Nor is the fixed system prompt: a process evaluates it once and keeps it in the KV cache
    # (a server's prompt cache does the same), so it costs a few seconds per process, not per
    # window. Unwarmed, a 40-message run charged it 25 times over in its per-1,000 figure.
    extractor.complete(SYSTEM_PROMPT, "1 [Ann] Hello.", WIRE_SCHEMA, 1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "mb.db", settings=settings, extractor=extractor) as mem:
        for lang, file in FILES.items():
            batch = sessions(args.memorybank / file, args.messages)
            n = sum(len(m) for _, m in batch)
            for sid, msgs in batch:
                mem.add_messages(sid, msgs, namespace=lang)
            c0, w0 = time.process_time(), time.perf_counter()
            entries = mem.extract(namespace=lang)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            sent = [e for e in entries if e.get("calls")]
            memories = len(mem.list("memory", namespace=lang, status="active", limit=10_000))
            rows.append((lang, n, len(entries), len(sent), sum(e["calls"] for e in sent),
                         sum(e.get("prompt_tokens", 0) for e in sent), sum(e.get("output_tokens", 0) for e in sent),
                         cpu, wall, memories))
    per = "per 1,000 messages"
    print(f"| language | messages | windows | sent to the model | calls {per} | CPU s {per} | wall s {per} | "
          f"prompt tokens {per} | output tokens {per} | memories {per} |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lang, n, windows, sent, calls, pt, ot, cpu, wall, memories in rows:
        k = 1000 / n
        print(f"| {lang} | {n} | {windows} | {sent} | {calls * k:.0f} | {cpu * k:,.0f} | {wall * k:,.0f} | "
              f"{pt * k:,.0f} | {ot * k:,.0f} | {memories * k:.0f} |")
    llm = extractor._llm() if isinstance(extractor, LlamaExtractor) else None
    drafts = getattr(settings, "llm_draft_tokens", 0)
    if drafts is None:  # chosen by a timed pass at the first call
        drafts = f"drafts {'on' if getattr(llm, 'drafts_pay', False) else 'off'} as timed here"
    else:
        drafts = f"{drafts} draft tokens"
    print(f"\n{extractor.name}, {settings.llm_threads or 'llama.cpp default'} generation threads, {drafts}; one run")


if __name__ == "__main__":
    main()
