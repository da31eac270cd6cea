"""A cost trial, not shipped: the extraction prompt and reply schema without one of the reply's
fields, asked live on the labelled windows and conflict cases. Compare its tables with
`python benchmarks/extraction_quality.py` (the recorded replies of the shipped prompt). Replies go
to a temporary file, never to the recordings CI replays. To compare with a live run of the
shipped prompt, pin the decoding in both (``GRAPHMEM_LLM_DRAFT_TOKENS=0``: one token a pass).

    python benchmarks/trials/lean_prompt.py no-reasoning      # about 30 minutes on 2 cores
    python benchmarks/trials/lean_prompt.py no-entities 20    # 20 windows and 20 cases

- no-entities (stop 27): no entity list `e`. Output tokens -28 % (en) / -14 % (zh); English
  precision 0.98 -> 0.91, Chinese recall 0.91 -> 0.85. Not kept.
- no-reasoning (stop 39): no reasoning line `r` (the pipeline never stored it). Against the
  shipped prompt asked live: output tokens -17 % (en) / -8 % (zh) a window, window recall up (en
  0.85 -> 0.87, zh 0.91 -> 0.96), precision down (0.98 -> 0.93, 0.90 -> 0.88), but changes made
  in 22 of 31 conflict cases against 28 of 32: the line that says what changed is what makes the
  model write the new value as a change. Not kept (README, *Tried and not kept*).
"""
import copy
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
import graphmem.extract.extractors as X  # noqa: E402
import graphmem.extract.schema as S  # noqa: E402
import extraction_quality as eq  # noqa: E402

FIELDS = {"no-entities": "e", "no-reasoning": "r"}


def without(field: str) -> tuple[str, dict]:
    """The shipped prompt and schema without ``field``: its line, its value in the example
    replies, its property."""
    lines = [line for line in X.SYSTEM_PROMPT.splitlines() if not line.startswith(f"{field}: ")]
    prompt = "\n".join(lines)
    for line in lines:
        if line.startswith('{"') and f'"{field}":' in line:
            reply = json.loads(line)
            reply.pop(field)
            prompt = prompt.replace(line, json.dumps(reply, ensure_ascii=False, separators=(",", ":")))
    assert f'"{field}":' not in prompt and prompt != X.SYSTEM_PROMPT
    schema = copy.deepcopy(S.WIRE_SCHEMA)
    schema["properties"].pop(field)
    schema["required"].remove(field)
    return prompt, schema


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in FIELDS:
        sys.exit(f"usage: lean_prompt.py {{{','.join(FIELDS)}}} [limit]")
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    # extract_window reads the prompt from the extractors module and the schema through
    # schema.wire_schema, which reads WIRE_SCHEMA from its own module
    X.SYSTEM_PROMPT, S.WIRE_SCHEMA = without(FIELDS[sys.argv[1]])
    replies = Path(tempfile.mkdtemp()) / "lean.json"
    out = eq.evaluate(live=True, record=True, limit=limit, recorded=replies)
    print("\n".join(eq.windows_table(out["windows"])))
    print()
    print("\n".join(eq.conflicts_table(out["conflicts"])))
    print(f"\nreplies: {replies}")


if __name__ == "__main__":
    main()
