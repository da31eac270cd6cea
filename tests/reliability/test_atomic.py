"""Import and ``graphmem add`` are all or nothing at any size (both backends): a line the
store would refuse is refused up front with its line number, a failure part way through the
write, and a process killed part way, leave the store as it was."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import graphmem.lifecycle.transfer as transfer
from benchmarks.faults import dump_lines, import_killed, table
from graphmem.errors import ImportFormatError, StoreError

N = 5_001


def _lines(m, n: int, last: dict | None = None) -> list[str]:
    return dump_lines(m, n) + ([json.dumps(last)] if last else [])


def _memories(m) -> int:
    return m.stats(namespace="bulk").get("memory", 0) if "bulk" in m.store.namespaces() else 0


@pytest.mark.parametrize("last, reason", [
    ({"node": {"kind": "session", "id": "mem_bulk_7"}}, "on line 9 too"),  # an id reused with another kind
    ({"node": {"kind": "memory", "id": "mem_zero", "text": "z"},
      "vector": base64.b64encode(np.zeros(8, "<f4").tobytes()).decode()}, "not all zero"),
    ({"edge": {"source": "mem_bulk_1", "type": "RELATES_TO", "target": "mem_bulk_2", "props": {"": 1}}},
     "non-empty and without NUL"),
    ({"edge": {"source": "mem_bulk_1", "type": "RELATES_TO", "target": "mem_bulk_2", "props": {"a\x00b": 1}}},
     "non-empty and without NUL"),
])
def test_an_import_the_store_would_refuse_at_its_last_line_writes_nothing(gmem, last, reason):
    if last.get("vector"):
        last["vector"] = base64.b64encode(np.zeros(gmem.embedder.dim, "<f4").tobytes()).decode()
    with pytest.raises(ImportFormatError, match=reason) as err:
        gmem.import_(_lines(gmem, N, last))
    assert err.value.line == N + 2  # the header, the memories, then the bad line
    assert _memories(gmem) == 0


def test_an_import_that_fails_part_way_through_its_writes_writes_nothing(gmem, monkeypatch):
    gmem.import_(_lines(gmem, 3))  # what was there before stays
    put, calls = gmem.store.put, []

    def failing(*args, **kwargs):
        calls.append(len(args[1]))
        if len(calls) == 3:
            raise StoreError("the disk is full")
        return put(*args, **kwargs)

    monkeypatch.setattr(transfer, "_PUT_BATCH", 100)
    monkeypatch.setattr(gmem.store, "put", failing)
    lines = _lines(gmem, 450)
    with pytest.raises(StoreError, match="disk is full"):
        gmem.import_([lines[0], *(line.replace("mem_bulk_", "mem_more_") for line in lines[1:])])
    assert calls[:2] == [100, 100]  # two batches were written inside the import's transaction
    monkeypatch.undo()
    assert _memories(gmem) == 3
    assert gmem.recall("Bulk fact number 2", k=5, namespace="bulk")  # the store still reads and writes
    gmem.import_([line.replace("mem_bulk_", "mem_after_") for line in _lines(gmem, 2)])
    assert _memories(gmem) == 5


def test_an_import_killed_part_way_writes_nothing(backend):
    row = import_killed(backend, trials=1)
    assert row.trials == 1 and row.failures == 0, table([row])


def test_graphmem_add_checks_every_line_first_and_writes_all_or_nothing(tmp_path):
    env = {**os.environ, "GRAPHMEM_EXTRACTION": "off", "GRAPHMEM_PATH": str(tmp_path / "g.db")}
    good = [json.dumps({"role": "user", "content": f"turn {i}", "session_id": "s1"}) for i in range(300)]
    for bad, says in ((json.dumps({"role": "user", "content": "x", "session_id": "a b"}), "session_id 'a b'"),
                      (json.dumps({"role": "user", "content": "x", "session_id": "s1", "id": "bad id"}), "id:"),
                      (json.dumps({"role": "user", "content": "x", "id": "m1"}) + "\n" +
                       json.dumps({"role": "user", "content": "y", "id": "m1"}), "'m1' is on an earlier line")):
        (tmp_path / "in.jsonl").write_text("\n".join([*good, bad]) + "\n")
        done = subprocess.run([sys.executable, "-m", "graphmem.cli", "add", str(tmp_path / "in.jsonl")], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 1 and says in done.stderr and "(line 30" in done.stderr, done.stderr
        assert not (tmp_path / "g.db").exists() or "s1" not in subprocess.run(
            [sys.executable, "-m", "graphmem.cli", "list", "session"], env=env, capture_output=True, text=True).stdout
