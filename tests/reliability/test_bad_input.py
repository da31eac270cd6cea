"""Bad input through the public API and the CLI: a clear graphmem error, and nothing written.
Each case here escaped as another library's exception (or was silently accepted) before."""

from __future__ import annotations

import io
import math

import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.errors import ValidationError

from ..conftest import make_memory


def _deep(n: int) -> dict:
    value: object = 1
    for _ in range(n):
        value = {"a": value}
    return value  # type: ignore[return-value]


BAD_CALLS = {
    "lone surrogate in a message": lambda m, s: m.add_messages("s", ["bad \ud800 text"]),
    "lone surrogate in a speaker": lambda m, s: m.add_messages("s", [{"content": "x", "speaker": "A\udfff"}]),
    "lone surrogate in a memory": lambda m, s: m.remember("bad \udfff"),
    "lone surrogate in a query": lambda m, s: m.recall("tea \ud800"),
    "metadata nested 5,000 deep": lambda m, s: m.add_messages("s", [{"content": "x", "metadata": _deep(5000)}]),
    "metadata nested 20 deep": lambda m, s: m.remember("x", metadata=_deep(20)),
    "metadata that is not JSON": lambda m, s: m.add_messages("s", [{"content": "x", "metadata": {"a": object()}}]),
    "NaN in metadata": lambda m, s: m.remember("x", metadata={"a": math.nan}),
    "an empty metadata key": lambda m, s: m.remember("x", metadata={"": 1}),
    "a lone surrogate in a metadata key": lambda m, s: m.remember("x", metadata={"k\ud800": 1}),  # was U+FFFD
    "NUL-only content": lambda m, s: m.add_messages("s", ["\x00\x00"]),  # was stored as an empty turn
    "control characters only": lambda m, s: m.add_messages("s", [{"content": "\x07\x00 \x1b", "speaker": "A"}]),
    "20 MB of metadata": lambda m, s: m.remember("x", metadata={"a": "x" * 20_001}),
    "an id with a space": lambda m, s: m.remember("x", id="a b"),
    "a memory over a message's id": lambda m, s: m.remember("x", id=s["message"]),
    "k as a string": lambda m, s: m.recall("tea", k="5"),
    "k as a bool": lambda m, s: m.recall("tea", k=True),
    "budget 0": lambda m, s: m.context("tea", budget=0),
    "budget as a string": lambda m, s: m.context("tea", budget="500"),
    "neighbourhood limit -1": lambda m, s: m.neighbourhood("Alice", limit=-1),
    "list limit as a string": lambda m, s: m.list("memory", limit="x"),
    "maintenance history limit 0": lambda m, s: m.maintenance_history(limit=0),
    "forget an int": lambda m, s: m.forget(5),
    "forget an empty list": lambda m, s: m.forget([]),
    "a 10 MB soul": lambda m, s: m.set_soul("x" * 10_000_000),
    "a lone surrogate in a soul": lambda m, s: m.set_soul("\ud800"),
    "a 10 MB session summary": lambda m, s: m.set_summary("s", "x" * 10_000_000),
    "a session id that is not text": lambda m, s: m.add_messages(5, ["x"]),
    "messages as an int": lambda m, s: m.add_messages("s", 1),
    "layers as an int": lambda m, s: m.recall("tea", layers=0),
    "a policy that is a list": lambda m, s: m.maintain(policy=[], dry_run=True),
    "an entity as a huge int": lambda m, s: m.neighbourhood(2**63),
    "steps that are None": lambda m, s: m.add_procedure("deploy", None),
    "message ids as a string": lambda m, s: m.add_episode("x", message_ids="", memory_ids=0),
    "an import line nested 50,000 deep": lambda m, s: m.import_(
        ['{"format": "graphmem-export"}', '{"kind": "memory", "metadata": ' + '{"a": ' * 50_000 + "1" + "}" * 50_001]),
}


@pytest.fixture
def seeded(backend, tmp_path):
    m = make_memory(backend, tmp_path)
    msgs = m.add_messages("s", [{"speaker": "Alice", "content": "Alice likes green tea."}])
    m.remember("Alice likes green tea", subject="Alice", predicate="likes", object="green tea")
    yield m, {"message": msgs[0].id}
    m.close()


def _snapshot(m) -> str:
    buf = io.StringIO()
    m.export(buf, vectors=False)
    return buf.getvalue()


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_is_a_validation_error_and_changes_nothing(seeded, case):
    m, seen = seeded
    before = _snapshot(m)
    with pytest.raises(ValidationError):
        BAD_CALLS[case](m, seen)
    m.flush()
    assert _snapshot(m) == before
    assert m.get(seen["message"]).kind == "message"


def test_the_cli_reads_files_it_can_and_explains_those_it_cannot(tmp_path):
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b'\xef\xbb\xbf{"content": "hello with a byte-order mark"}\n')
    result = runner.invoke(app, ["--db", db, "add", str(bom), "-s", "s"])
    assert result.exit_code == 0 and "added 1 messages" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"content": "bad \xff byte"}\n')
    for args, says in ((["add", str(bad)], "is not UTF-8 text"), (["add", str(tmp_path / "missing.jsonl")], "cannot read"),
                       (["add", str(tmp_path)], "cannot read"), (["import", str(tmp_path)], "cannot read")):
        result = runner.invoke(app, ["--db", db, *args])
        assert result.exit_code == 1 and says in result.output and "Traceback" not in result.output, result.output
    for args, says in ((["cypher", "一" * 300], "neither an exploration query"), (["export", str(tmp_path)], "cannot write")):
        result = runner.invoke(app, ["--db", db, *args])
        assert result.exit_code == 1 and says in result.output and "Traceback" not in result.output, result.output
    result = runner.invoke(app, ["--db", db, "add", "-s", "s"], input=b"\xff\xfe not utf-8\n")
    assert result.exit_code == 1 and "standard input is not UTF-8" in result.output


def test_an_import_is_all_or_nothing_past_its_first_batch(seeded):
    import json

    from graphmem.models import MemoryRecord

    m, seen = seeded
    before = _snapshot(m)
    rows = [json.dumps({"node": MemoryRecord(namespace="default", text=f"imported fact {i}").model_dump(mode="json")})
            for i in range(6_000)]  # more than one write batch
    clash = MemoryRecord(id=seen["message"], namespace="default", text="a memory under a message's id")
    loose = {"source": "mem_nowhere", "type": "MENTIONS", "target": "ent_nowhere", "namespace": "default"}
    for last in (json.dumps({"node": clash.model_dump(mode="json")}), json.dumps({"edge": loose})):
        with pytest.raises(ValidationError):
            m.import_([*rows, last])
        assert _snapshot(m) == before


def test_cli_add_checks_every_line_before_writing_any(tmp_path):
    import json

    lines = [json.dumps({"session_id": "s", "content": f"turn {i}"}) for i in range(600)]
    lines.append(json.dumps({"session_id": "x" * 300, "content": "a session id too long"}))
    data = tmp_path / "turns.jsonl"
    data.write_text("\n".join(lines), encoding="utf-8")
    db = str(tmp_path / "cli.db")
    result = CliRunner().invoke(app, ["--db", db, "add", str(data)])
    assert result.exit_code == 1 and "line 601" in result.output
    counts = json.loads(CliRunner().invoke(app, ["--db", db, "stats", "--json"]).output)
    assert (counts["message"], counts["session"], counts["namespaces"]) == (0, 0, [])  # nothing was written


def test_long_unfamiliar_chinese_runs_are_tagged_in_bounded_time():
    import random
    import time

    from graphmem.text import EntityTagger

    tagger = EntityTagger()
    tagger.tag_many(["你好，王芳"])  # loads jieba
    rng = random.Random(1)
    run = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(20_000))
    t0 = time.perf_counter()
    tagger.tag_many([run])
    assert time.perf_counter() - t0 < 30  # was 499 s: jieba's HMM over the whole run; now a budget, then its dictionary
    assert [e.name for e in tagger.tag("下周三我要去北京出差。我叫王芳。")] == ["北京", "王芳"]


def test_records_stored_before_the_limits_stay_readable():
    import json

    from graphmem.models import MemoryRecord
    from graphmem.store.base import hydrate

    old = MemoryRecord(namespace="n", text="written by an earlier version").model_dump(mode="json")
    old["metadata"] = {"score": float("nan"), "notes": "x" * 30_000}  # refused as input now
    record = hydrate("memory", json.dumps(old), old["id"], 0, None, None)
    assert record.metadata["notes"] == "x" * 30_000
    with pytest.raises(ValueError):
        MemoryRecord(namespace="n", text="new", metadata=old["metadata"])
    from graphmem.models import Message  # a NUL-only turn stored before that was refused still reads

    turn = Message(session_id="s", content="x").model_dump(mode="json") | {"content": "\x00"}
    assert hydrate("message", json.dumps(turn), turn["id"], 0, None, None).content == "\x00"
    with pytest.raises(ValueError):
        Message(session_id="s", content="\x00")


ODD_TURNS = [
    "Here is the rhythm:\n```\n" + "\n".join(["|:" + "\\_" * 60 + ":|" + " Dum Dum Ka " * 8] * 6) + "\n```",
    "function(a){return a.map(Function.prototype.call,String.prototype.trim)}" * 60,  # minified code
    "QmFzZTY0IGlzIG5vdCBhIG5hbWUuIA==" * 300,  # base64
    "Token " + "Ab" * 5000,  # one 10,000-character token
    " ".join(f"{w}son Ltd" for w in ["Ander", "Peter", "Jack", "Will", "Robin"] * 30),  # a 'name' of 600 characters
]


@pytest.mark.parametrize("wait", [True, False])
def test_what_the_tagger_derives_never_refuses_or_stalls_a_write(gmem, wait, caplog):
    from graphmem.text.entities import MAX_NAME_CHARS

    added = gmem.add_messages("s", [*ODD_TURNS, "Greta moved to Lisbon."], wait=wait)
    gmem.flush()
    assert len(added) == len(ODD_TURNS) + 1 and gmem.pending() == 0
    names = [e.name for e in gmem.list("entity", limit=1000)]
    assert "Lisbon" in names and max(map(len, names)) <= MAX_NAME_CHARS, names


def test_a_run_of_rare_chinese_characters_is_tagged_by_the_dictionary_not_by_the_hmm(monkeypatch):
    import jieba.posseg as pseg

    from graphmem.text.entities import EntityTagger

    tagger, steps = EntityTagger(), []
    tagger.tag("我叫张伟。")  # jieba loaded
    viterbi = pseg.viterbi

    def counted(obs, *args):
        steps.append(len(obs))
        return viterbi(obs, *args)

    monkeypatch.setattr(pseg, "viterbi", counted)
    for attack in ("齉" * 1000, "齉的" * 500, "龘" * 20_000):  # 7.6 CPU s a turn when the HMM read them
        assert tagger.tag(attack) == [] and steps == [], attack
    tagged = tagger.tag("同事张伟搬到杭州了，住在犇犇家旁边。")
    assert {("张伟", "person"), ("杭州", "place")} <= {(e.name, e.type) for e in tagged}
    assert steps  # a sentence with a rare character or two still goes through the HMM


def test_a_turn_whose_derived_names_break_a_limit_is_enriched_without_them_and_the_queue_goes_on(gmem, monkeypatch):
    from graphmem.text import TaggedEntity

    real = gmem._parts.tagger.tag_many

    def poisoned(texts):  # a tagger (a custom one, say) that derives a name no entity may have
        return [[TaggedEntity(name="X" * 300, type="org")] if "poison" in t else tags for t, tags in zip(texts, real(texts))]

    monkeypatch.setattr(gmem._parts.tagger, "tag_many", poisoned)
    gmem.add_messages("s", ["Greta moved to Lisbon.", "poison pill", "Ines lives in Porto."], wait=False)
    gmem.flush()  # was: the worker died and every later flush raised
    assert gmem.pending() == 0
    assert {"Lisbon", "Porto"} <= {e.name for e in gmem.list("entity")}
    gmem.add_messages("s", ["Later turn about Faro."], wait=False)
    gmem.flush()
    assert gmem.pending() == 0


def test_naive_times_set_the_documented_way_are_read_as_utc(gmem):
    """``RecallFilter.DEFAULT.model_copy(update=...)`` skips validation: a naive ``asked_at`` or
    ``as_of`` is read as UTC, as everywhere else, instead of raising a naive-vs-aware TypeError."""
    from datetime import datetime, timezone

    from graphmem.settings import RecallFilter

    gmem.remember("Ana moved to Porto last spring")
    at, utc_at = datetime(2030, 1, 1), datetime(2030, 1, 1, tzinfo=timezone.utc)
    naive = RecallFilter.READ_ONLY.model_copy(update={"asked_at": at, "as_of": at})
    aware = RecallFilter.READ_ONLY.model_copy(update={"asked_at": utc_at, "as_of": utc_at})
    got = gmem.recall("Where did Ana move?", k=3, filter=naive)
    assert [h.item.id for h in got] == [h.item.id for h in gmem.recall("Where did Ana move?", k=3, filter=aware)]
    assert got and "Porto" in got[0].text


def test_an_episode_over_the_limit_is_refused_before_it_is_read(gmem, monkeypatch):
    """A 10 MB summary was tokenized for keywords (7 s) before the length check refused it."""
    import graphmem.lifecycle.builders as builders

    read = []
    monkeypatch.setattr(builders, "keywords", lambda text: read.append(len(text)) or [])
    with pytest.raises(ValidationError, match="limit"):
        gmem.add_episode("x " * 5_000_000)
    assert read == []
    gmem.add_episode("A short episode")
    assert read == [len("A short episode")]
