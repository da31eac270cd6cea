"""What stopping a reply where its memories end saves, measured in pairs: every MemoryBank
window of ``benchmarks/extraction.py`` is asked twice in a row by one process, once whole and
once stopped (in alternating order, each of its own copy of the model), and the pipeline goes on with the stopped reply as it
does when shipped. A drift in the machine's speed (this VM's CPU seconds for byte-identical
replies have differed by 12 % between runs) then weighs on both halves of a pair alike.

    GRAPHMEM_LLM_DRAFT_TOKENS=0 python benchmarks/trials/stop_paired.py --messages 200 [--lang zh]

Prints per language the pairs, both replies' output tokens and CPU seconds, and whether each
stopped reply is the start of its whole one (greedy decoding: it must be, token for token).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from extraction import DEFAULT_DATA, FILES, sessions, warm  # noqa: E402

from graphmem import Memory  # noqa: E402
from graphmem.engine.extraction import make_extractor  # noqa: E402
from graphmem.extract.extractors import LlamaExtractor  # noqa: E402
from graphmem.settings import Settings  # noqa: E402


class Paired:
    """Asks each stopped call whole as well, in alternating order; answers with the stopped reply.
    The two are asked of two copies of the model (another seed: greedy decoding does not read
    it), each with its own cache, so that each pays for the window's prompt."""

    def __init__(self, stopped: LlamaExtractor) -> None:
        path, n_ctx, n_threads, n_gpu_layers, seed = stopped._key
        whole = LlamaExtractor(path, n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers, seed=seed + 1,
                               draft_tokens=stopped.draft_tokens)
        self.models = {"whole": warm(whole), "stopped": warm(stopped)}
        self.name, self.pairs = stopped.name, []

    def complete(self, system, user, schema, max_tokens, stop=()):
        if not stop:  # a window that may teach a workflow is asked whole either way
            return self.models["stopped"].complete(system, user, schema, max_tokens)
        runs = {}
        for variant in (("whole", "stopped") if len(self.pairs) % 2 == 0 else ("stopped", "whole")):
            c0 = time.process_time()
            runs[variant] = self.models[variant].complete(system, user, schema, max_tokens,
                                                          stop=stop if variant == "stopped" else ())
            runs[variant + " cpu"] = time.process_time() - c0
        self.pairs.append(runs)
        return runs["stopped"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memorybank", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--messages", type=int, default=64, help="messages per language")
    ap.add_argument("--lang", choices=sorted(FILES), action="append", help="languages (default: both)")
    args = ap.parse_args()
    settings = Settings(extraction="manual")
    inner = make_extractor(settings)
    if not isinstance(inner, LlamaExtractor):
        sys.exit("a trial of the local model: unset GRAPHMEM_LLM_BASE_URL")
    paired = Paired(inner)
    print("| language | pairs | output tokens whole / stopped | CPU s whole / stopped | saved | stopped reply starts its whole one |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "mb.db", settings=settings, extractor=paired) as mem:
        for lang in args.lang or list(FILES):
            for sid, msgs in sessions(args.memorybank / FILES[lang], args.messages):
                mem.add_messages(sid, msgs, namespace=lang)
            paired.pairs = []
            mem.extract(namespace=lang)
            p = paired.pairs
            whole, stopped = (sum(r[v].output_tokens for r in p) for v in ("whole", "stopped"))
            cpu_w, cpu_s = (sum(r[f"{v} cpu"] for r in p) for v in ("whole", "stopped"))
            prefix = sum(r["whole"].text.startswith(r["stopped"].text) for r in p)
            print(f"| {lang} | {len(p)} | {whole:,} / {stopped:,} | {cpu_w:.0f} / {cpu_s:.0f} | "
                  f"{1 - cpu_s / max(cpu_w, 1e-9):.1%} | {prefix} of {len(p)} |", flush=True)


if __name__ == "__main__":
    main()
