"""A cost trial, not shipped (stop 27): the extraction prompt and reply schema without the
entity list `e`, and without `pr` unless the window has a sequence cue, asked live on the
labelled windows; compare its table with `python benchmarks/extraction_quality.py --only windows`
(the recorded replies of the current prompt). Replies go to a temporary file, never to the
recordings CI replays.

    python benchmarks/trials/lean_prompt.py 60     # all 60 windows, about 20 minutes on 2 cores
"""
import copy
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
import graphmem.extract.extractors as X
import graphmem.extract.schema as S
import extraction_quality as eq

limit = int(sys.argv[1]) if len(sys.argv) > 1 else 20
base_prompt, base_schema = X.SYSTEM_PROMPT, S.WIRE_SCHEMA
lean = base_prompt.replace("e: named entities: n name as written, y person|org|place|thing|concept|event|other\n", "")
lean = re.sub(r',"e":\[[^\]]*\]', "", lean)
assert '"e":' not in lean
no_pr = lean.replace("pr: a workflow the user taught step by step (first, then, finally) as task and ordered steps; its steps are not memories. Usually [].\n", "")
no_pr = re.sub(r',"pr":\[\]', "", no_pr)
no_pr = re.sub(r',"pr":\[\{.*?\}\]\}', "}", no_pr)
schema_lean = copy.deepcopy(base_schema); schema_lean["properties"].pop("e"); schema_lean["required"].remove("e")
schema_no_pr = copy.deepcopy(schema_lean); schema_no_pr["properties"].pop("pr"); schema_no_pr["required"].remove("pr")
orig = X.extract_window

def variant(extractor, messages, *, known=(), max_tokens=600, attempts=2):
    cue = S.reads_like_a_workflow(messages)
    X.SYSTEM_PROMPT, X.WIRE_SCHEMA = (lean, schema_lean) if cue else (no_pr, schema_no_pr)
    try:
        return orig(extractor, messages, known=known, max_tokens=max_tokens, attempts=attempts)
    finally:
        X.SYSTEM_PROMPT, X.WIRE_SCHEMA = base_prompt, base_schema

def parse_lean(data):
    if isinstance(data, dict):
        data.setdefault("e", []); data.setdefault("pr", [])
    return S_parse(data)
S_parse = S.parse_wire
X.parse_wire = parse_lean
import graphmem.engine.extraction as E
E.extract_window = variant
rec = Path(tempfile.mkdtemp()) / "lean.json"
out = eq.evaluate(live=True, record=True, parts=("windows",), limit=limit, recorded=rec)
print("\n".join(eq.windows_table(out["windows"])))
