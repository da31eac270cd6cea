"""Extraction cost per 4-message window, English and Chinese, naive against optimised.

    python benchmarks/extraction.py [--memorybank ../shared/bench/memorybank/eval_data] [--windows 3]

Windows are consecutive turns (user query, assistant response) of MemoryBank's first users.
- naive: the model's KV cache is dropped before every call, so the whole prompt (instructions,
  examples and window) is evaluated each time, and every window is sent, chatter included;
- optimised (graphmem's default): the fixed instruction prefix stays in the KV cache across
  calls, so only the window is evaluated, and windows of pure chatter never reach the model.
Prints seconds, prompt and output tokens and memories per window (medians), and model calls
per 1,000 messages of the MemoryBank histories (chatter skipped). One run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from graphmem.engine.extraction import is_trivial
from graphmem.extract import default_model_path
from graphmem.extract.extractors import LlamaExtractor, extract_window
from graphmem.models import Message
from graphmem.settings import Settings

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/bench/memorybank/eval_data"


def history_messages(path: Path) -> list[Message]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[Message] = []
    for name, user in data.items():
        for day, turns in user["history"].items():
            for turn in turns:
                for who, text in ((name, turn.get("query")), ("assistant", turn.get("response"))):
                    if text and text.strip():
                        out.append(Message(session_id=f"{name}-{day}", speaker=who, content=text.strip(),
                                           role="assistant" if who == "assistant" else "user",
                                           created_at=f"{day}T12:00:00Z", seq=len(out)))
    return out


def windows(messages: list[Message], size: int = 4) -> list[list[Message]]:
    by_session: dict[str, list[Message]] = {}
    for m in messages:
        by_session.setdefault(m.session_id, []).append(m)
    return [ms[i : i + size] for ms in by_session.values() for i in range(0, len(ms), size)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memorybank", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--windows", type=int, default=3, help="windows per language and mode")
    args = ap.parse_args()
    settings = Settings()
    extractor = LlamaExtractor(default_model_path(settings.cache_dir / "models"))
    llm = extractor._llm()
    rows = []
    examples = {}
    calls_per_1000 = {}
    for lang, file in (("English", "en/memory_bank_en.json"), ("Chinese", "cn/memory_bank_cn.json")):
        msgs = history_messages(args.memorybank / file)
        wins = windows(msgs)
        sent = sum(1 for w in wins if not is_trivial(w))
        calls_per_1000[lang] = (len(wins), sent, 1000 * sent / len(msgs), len(msgs))
        sample = [w for w in wins if len(w) == 4][: args.windows]
        for mode in ("naive", "optimised"):
            stats = []
            for win in sample:
                if mode == "naive":
                    llm.reset()  # forget the cached instruction prefix
                t0 = time.perf_counter()
                out, st = extract_window(extractor, win, max_tokens=settings.llm_max_tokens)
                stats.append((time.perf_counter() - t0, st.prompt_tokens, st.output_tokens, len(out.memories), st.calls))
                examples.setdefault(lang, (win, out))
            rows.append((lang, mode, stats))
    print("| language | mode | s/window (median) | s/window (max) | prompt tokens | output tokens | memories | calls |")
    print("|---|---|---|---|---|---|---|---|")
    for lang, mode, stats in rows:
        cols = list(zip(*stats))
        print(f"| {lang} | {mode} | {statistics.median(cols[0]):.1f} | {max(cols[0]):.1f} | "
              f"{statistics.median(cols[1]):.0f} | {statistics.median(cols[2]):.0f} | "
              f"{statistics.median(cols[3]):.0f} | {sum(cols[4])} |")
    print()
    for lang, (windows_total, sent, per_1000, n) in calls_per_1000.items():
        print(f"{lang}: {n} messages in {windows_total} windows; {sent} sent to the model "
              f"({per_1000:.0f} model calls per 1,000 messages, chatter windows skipped)")
    for lang, (win, out) in examples.items():
        print(f"\n{lang} example window:")
        for m in win:
            print(f"  [{m.speaker}] {m.content[:160]}")
        for mem in out.memories:
            print(f"  -> {mem.text}  ({mem.subject} | {mem.predicate} | {mem.object}; importance {mem.importance:.2f})")


if __name__ == "__main__":
    main()
