"""A cost trial, not shipped (stop 38): how much more the reply's decoding could save by drafting
differently. The real model's recorded replies to the labelled windows are replayed through
drafters (greedy decoding takes a drafted token exactly when it is the reply's next token), and
each pass is charged what a batch of its size costs the model on one thread, measured here.

    python benchmarks/trials/draft_lookup.py            # about a minute on 2 cores

Prints the measured cost of a pass by batch size, then passes and cost per reply token for:
no drafts, the shipped ``LookupDrafter`` at several draft lengths, other n-gram ranges, and
drafts cut to the reply's fixed structure (stop 39: 0.69 passes a token, still 1.00x the CPU of
one token a pass on a machine where two tokens cost 1.85 passes of one).
"""
import json
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llama_cpp.llama_chat_format import Jinja2ChatFormatter  # noqa: E402

from graphmem.engine.extraction import make_extractor  # noqa: E402
from graphmem.extract.extractors import SYSTEM_PROMPT  # noqa: E402
from graphmem.extract.sampling import LookupDrafter  # noqa: E402
from graphmem.settings import Settings  # noqa: E402

SIZES = (1, 2, 3, 4, 6, 8, 12, 13)


def pass_costs(llm, prompt: list[int]) -> dict[int, float]:
    """CPU ms of one pass of n tokens after ``prompt`` on the generation threads, as a drafted
    pass runs (``_pass_ms``: the median of three rounds over every size)."""
    llm.reset()
    llm.eval(prompt)
    return dict(zip(SIZES, llm._pass_ms(*[prompt[-n:] for n in SIZES])))


def cost_of(costs: dict[int, float], n: int) -> float:
    lo = max(s for s in costs if s <= n)
    hi = min((s for s in costs if s >= n), default=lo)
    return costs[lo] if hi == lo else costs[lo] + (costs[hi] - costs[lo]) * (n - lo) / (hi - lo)


def replay(cases, make, costs) -> tuple[int, int, int, float]:
    """Reply tokens, passes, tokens decoded and CPU ms when every reply is decoded with
    ``make(prompt)``'s drafts."""
    tokens = passes = decoded = 0
    ms = 0.0
    for prompt, reply in cases:
        drafter, i = make(prompt), 0  # the first token comes with the prompt's evaluation
        while i < len(reply):
            drafter.extend([reply[i]])
            draft = drafter.draft()
            taken = 0
            while taken < len(draft) and i + 1 + taken < len(reply) and reply[i + 1 + taken] == draft[taken]:
                taken += 1
            drafter.extend(reply[i + 1:i + 1 + taken])
            drafter.taken(len(draft), taken)
            passes += 1
            decoded += len(draft) + 1
            ms += cost_of(costs, len(draft) + 1)
            i += 1 + taken
        tokens += len(reply)
    return tokens, passes, decoded, ms


class NoDrafts(LookupDrafter):
    def draft(self) -> list[int]:
        return []


KEYS = {"r", "m", "t", "k", "s", "p", "o", "i", "c", "n", "e", "y", "ep", "pr", "task", "steps"}


class StructureOnly(LookupDrafter):
    """The lookup's draft cut before its first token that is not the reply's fixed structure
    (JSON punctuation and the schema's keys): the tokens the grammar leaves no choice about,
    which greedy decoding nearly always takes."""

    def __init__(self, prompt: list[int], piece, **kw) -> None:
        super().__init__(prompt, **kw)
        self.piece = piece

    def draft(self) -> list[int]:
        out = []
        for token in super().draft():
            text = self.piece(token).decode("utf-8", "replace").strip()
            if text.strip('{}[]":,') not in KEYS | {""}:
                break
            out.append(token)
        return out


def main() -> None:
    llm = make_extractor(Settings(extraction="manual"))._llm()
    fmt = Jinja2ChatFormatter(template=llm.metadata["tokenizer.chat_template"], eos_token="", bos_token="")
    recorded = json.loads((ROOT / "tests/data/extraction_eval/recorded.json").read_text(encoding="utf-8"))
    cases = []
    for rec in recorded.values():
        prompt = fmt(messages=[{"role": "system", "content": SYSTEM_PROMPT},
                               {"role": "user", "content": rec["user"]}]).prompt
        cases.append((llm.tokenize(prompt.encode(), add_bos=False, special=True),
                      llm.tokenize(rec["reply"].encode(), add_bos=False)))
    costs = pass_costs(llm, cases[0][0])
    print("| tokens in a pass | " + " | ".join(map(str, costs)) + " |")
    print("|---" * (len(costs) + 1) + "|")
    print("| CPU ms, one thread | " + " | ".join(f"{v:.0f}" for v in costs.values()) + " |\n")
    variants = {"no drafts": NoDrafts}
    variants |= {f"lookup 4-2 grams, up to {m} (shipped: 12)": (lambda p, m=m: LookupDrafter(p, most=m))
                 for m in (4, 8, 12, 16)}
    variants |= {f"lookup {hi}-{lo} grams, up to 12": (lambda p, hi=hi, lo=lo: LookupDrafter(p, longest=hi, shortest=lo))
                 for hi, lo in ((4, 1), (3, 1), (6, 2), (8, 3))}
    piece = cache(lambda t: llm.detokenize([t]))
    variants |= {f"structure only, up to {m}": (lambda p, m=m: StructureOnly(p, piece, most=m)) for m in (4, 12)}
    print(f"{len(cases)} recorded replies\n")
    print("| drafter | reply tokens | passes per token | tokens decoded per token | CPU ms per reply token | vs no drafts |")
    print("|---|---|---|---|---|---|")
    plain = None
    for name, make in variants.items():
        tokens, passes, decoded, ms = replay(cases, make, costs)
        plain = plain or ms / tokens
        print(f"| {name} | {tokens} | {passes / tokens:.3f} | {decoded / tokens:.2f} | {ms / tokens:.1f} | "
              f"{ms / tokens / plain:.2f} |")


if __name__ == "__main__":
    main()
