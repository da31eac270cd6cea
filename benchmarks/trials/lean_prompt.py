"""A cost trial, not shipped: the extraction prompt and reply schema without one of the reply's
fields, or with its memories written as lists, asked live on the labelled windows and conflict cases. Compare its tables with
`python benchmarks/extraction_quality.py` (the recorded replies of the shipped prompt). Replies go
to a temporary file, never to the recordings CI replays. To compare with a live run of the
shipped prompt, pin the decoding in both (``GRAPHMEM_LLM_DRAFT_TOKENS=0``: one token a pass).

    python benchmarks/trials/lean_prompt.py no-reasoning      # about 30 minutes on 2 cores
    python benchmarks/trials/lean_prompt.py no-entities 20    # 20 windows and 20 cases
    python benchmarks/trials/lean_prompt.py no-source         # no `c` in the memories (set to "u")
    python benchmarks/trials/lean_prompt.py positional        # memories and entities as lists of values

- no-entities (stop 27): no entity list `e`. Output tokens -28 % (en) / -14 % (zh); English
  precision 0.98 -> 0.91, Chinese recall 0.91 -> 0.85. Not kept.
- no-reasoning (stop 39): no reasoning line `r` (the pipeline never stored it). Against the
  shipped prompt asked live: output tokens -17 % (en) / -8 % (zh) a window, window recall up (en
  0.85 -> 0.87, zh 0.91 -> 0.96), precision down (0.98 -> 0.93, 0.90 -> 0.88), but changes made
  in 22 of 31 conflict cases against 28 of 32: the line that says what changed is what makes the
  model write the new value as a change. Not kept (README, *Tried and not kept*).
- no-source (stop 39): no `c` in the memories (the model wrote "u" for 751 of 751), set to "u".
  Output -15 % (en) / -5 % (zh), changes made 27 of 32, but English recall 0.85 -> 0.72. Not kept.
- positional (stop 41): every field kept, but each memory and entity written as a list of its
  values ([t,k,s,p,o,i,c,n], [n,y]) instead of an object, in the prompt's examples and the
  schema (``prefixItems``): a key and its separators are 3 tokens, 22 of a Chinese memory's 45.
  Output -32 % (en) / -27 % (zh) a window, but recall 0.85 -> 0.80 and 0.91 -> 0.80, precision
  0.98 -> 0.86 and 0.90 -> 0.71 (the assistant's words, workflow steps as memories), supersession
  recall down in every group. Not kept: the keys are what keeps the small model on its fields.
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

FIELDS = {"no-entities": ("e",), "no-reasoning": ("r",), "no-source": ("m", "c")}
FILLED = {("m", "c"): "u"}  # a field no longer asked: the value the model wrote for every memory (751 of 751)


def without(path: tuple[str, ...]) -> tuple[str, dict]:
    """The shipped prompt and schema without the reply field at ``path`` (a top-level key, or a
    key of the memories): its line, its values in the example replies, its property."""
    *parent, key = path
    indent = " " if parent else ""
    lines = [line for line in X.SYSTEM_PROMPT.splitlines() if not line.startswith(f"{indent}{key}: ")]
    prompt = "\n".join(lines)
    for line in lines:
        if line.startswith('{"') and f'"{key}":' in line:
            reply = json.loads(line)
            for item in reply[parent[0]] if parent else [reply]:
                item.pop(key)
            prompt = prompt.replace(line, json.dumps(reply, ensure_ascii=False, separators=(",", ":")))
    assert f'"{key}":' not in prompt and prompt != X.SYSTEM_PROMPT
    schema = copy.deepcopy(S.WIRE_SCHEMA)
    node = schema["properties"][parent[0]]["items"] if parent else schema
    node["properties"].pop(key)
    node["required"].remove(key)
    return prompt, schema


MEMORY_FIELDS, ENTITY_FIELDS = "tkspoicn", "ny"


def positional() -> tuple[str, dict]:
    """The shipped prompt and schema with each memory and entity written as a list of its
    values in a fixed order instead of an object."""
    prompt = X.SYSTEM_PROMPT.replace(" skills. Each:\n", " skills. Each a list [t,k,s,p,o,i,c,n]:\n")
    prompt = prompt.replace("e: named entities: n name", "e: named entities, each a list [n,y]: n name")
    for line in prompt.splitlines():
        if line.startswith('{"') and '"m":' in line:
            reply = json.loads(line)
            reply["m"] = [[m[k] for k in MEMORY_FIELDS] for m in reply["m"]]
            reply["e"] = [[e[k] for k in ENTITY_FIELDS] for e in reply["e"]]
            prompt = prompt.replace(line, json.dumps(reply, ensure_ascii=False, separators=(",", ":")))
    assert prompt.count("Each a list") == 1 and prompt.count("each a list") == 1 and '"t":' not in prompt
    schema = copy.deepcopy(S.WIRE_SCHEMA)
    for key, fields in (("m", MEMORY_FIELDS), ("e", ENTITY_FIELDS)):
        node = schema["properties"][key]
        props = node["items"]["properties"]
        node["items"] = {"type": "array", "prefixItems": [props[k] for k in fields]}
    return prompt, schema


def as_objects(parse):
    """``parse_wire`` that first turns the memories and entities written as lists into objects."""
    def parse_objects(data):
        if isinstance(data, dict):
            for key, fields in (("m", MEMORY_FIELDS), ("e", ENTITY_FIELDS)):
                data[key] = [dict(zip(fields, v)) if isinstance(v, list) else v for v in data.get(key) or []]
        return parse(data)
    return parse_objects


def filled(parse):
    """``parse_wire`` that first sets the fields no longer asked to the value the model wrote."""
    def parse_filled(data):
        if isinstance(data, dict):
            for (parent, key), value in FILLED.items():
                for item in data.get(parent) or []:
                    if isinstance(item, dict):
                        item.setdefault(key, value)
        return parse(data)
    return parse_filled


def main() -> None:
    variants = [*FIELDS, "positional"]
    if len(sys.argv) < 2 or sys.argv[1] not in variants:
        sys.exit(f"usage: lean_prompt.py {{{','.join(variants)}}} [limit]")
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    # extract_window reads the prompt from the extractors module and the schema through
    # schema.wire_schema, which reads WIRE_SCHEMA from its own module
    if sys.argv[1] == "positional":
        X.SYSTEM_PROMPT, S.WIRE_SCHEMA = positional()
        X.parse_wire = as_objects(X.parse_wire)
    else:
        X.SYSTEM_PROMPT, S.WIRE_SCHEMA = without(FIELDS[sys.argv[1]])
        X.parse_wire = filled(X.parse_wire)
    replies = Path(tempfile.mkdtemp()) / "lean.json"
    out = eq.evaluate(live=True, record=True, limit=limit, recorded=replies)
    print("\n".join(eq.windows_table(out["windows"])))
    print()
    print("\n".join(eq.conflicts_table(out["conflicts"])))
    print(f"\nreplies: {replies}")


if __name__ == "__main__":
    main()
