"""The command line: every command runs, errors are one line with exit code 1."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from graphmem.cli import app

runner = CliRunner()


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "cli.db")


def run(db, *args, input=None):
    return runner.invoke(app, ["--db", db, *args], input=input)


def test_help_lists_every_command():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("init", "add", "remember", "recall", "context", "show", "forget", "history", "stats", "export",
                "import", "demo", "list", "soul", "extract", "status", "update", "model"):
        assert cmd in result.output


def test_init_add_recall_context(db):
    assert run(db, "init").exit_code == 0
    lines = "\n".join(json.dumps(m, ensure_ascii=False) for m in [
        {"session_id": "s1", "role": "user", "content": "I'm moving to Lisbon in June"},
        {"session_id": "s1", "role": "assistant", "content": "Exciting! Need help with flats?"},
        {"session_id": "s2", "role": "user", "content": "我喜欢吃辣的川菜"},
    ])
    result = run(db, "add", input=lines)
    assert result.exit_code == 0, result.output
    assert "added 3 messages" in result.output
    result = run(db, "recall", "where is the user moving?", "-k", "2")
    assert result.exit_code == 0 and "Lisbon" in result.output and "via" in result.output
    data = json.loads(run(db, "recall", "川菜", "--json").output)
    assert data[0]["item"]["content"] == "我喜欢吃辣的川菜" and "breakdown" in data[0]
    result = run(db, "context", "moving plans", "--budget", "100", "--session", "s1")
    assert result.exit_code == 0 and "## Recent conversation" in result.output and "tokens" in result.output


def test_add_reports_bad_lines_and_adds_nothing(db, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"content": "fine"}\n{oops\n{"content": "\\u0000"}\n', encoding="utf-8")
    result = run(db, "add", str(path), "--session", "s")
    assert result.exit_code == 1
    assert "line 2" in result.output and "line 3" in result.output
    assert "Traceback" not in result.output
    assert json.loads(run(db, "stats", "--json").output)["namespaces"] == []  # nothing was written


def test_remember_show_history_forget(db):
    out = json.loads(run(db, "remember", "Ann prefers tea", "--subject", "Ann", "--predicate", "prefers",
                         "--object", "tea", "--category", "preference", "--json").output)
    mem_id = out["id"]
    shown = json.loads(run(db, "show", mem_id).output)
    assert shown["text"] == "Ann prefers tea"
    hood = json.loads(run(db, "show", "Ann").output)
    assert hood["entity"]["name"] == "Ann"
    result = run(db, "history", mem_id)
    assert result.exit_code == 0 and "this" in result.output
    assert "1" in run(db, "list", "--kind", "memory").output
    fixed = json.loads(run(db, "update", mem_id, "--object", "oolong tea", "--json").output)  # the triple by hand
    assert (fixed["object"], fixed["text"]) == ("oolong tea", "Ann prefers tea") and fixed["id"] != mem_id
    assert "deleted 1" in run(db, "forget", fixed["id"]).output  # the version it superseded is current again
    result = run(db, "forget", mem_id)
    assert result.exit_code == 0 and "deleted 1" in result.output
    result = run(db, "show", mem_id)
    assert result.exit_code == 1 and result.output.count("\n") <= 2 and "error:" in result.output


def test_errors_are_one_line_and_verbose_shows_traceback(db):
    result = runner.invoke(app, ["--db", db, "-n", "nowhere", "show", "mem_nope"])
    assert result.exit_code == 1 and "no entity named 'mem_nope'" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["--db", db, "-v", "-n", "nowhere", "show", "mem_nope"])
    assert result.exit_code == 1 and "Traceback" in result.output


def test_reads_of_a_new_namespace_find_nothing(db):
    for args in (["recall", "anything"], ["context", "anything", "--session", "s1"], ["list"], ["stats"]):
        result = runner.invoke(app, ["--db", db, "-n", "nowhere", *args])
        assert result.exit_code == 0 and "does not exist" not in result.output, (args, result.output)
    assert "(empty: nothing stored matches yet)" in run(db, "context", "anything").output


def test_export_import_round_trip(db, tmp_path):
    run(db, "remember", "Ann prefers tea")
    run(db, "add", "--session", "s", input='{"content": "hello there"}\n')
    dump = tmp_path / "dump.jsonl"
    assert run(db, "export", str(dump)).exit_code == 0
    other = str(tmp_path / "other.db")
    result = run(other, "import", str(dump))
    assert result.exit_code == 0 and "imported" in result.output
    dump2 = tmp_path / "dump2.jsonl"
    run(other, "export", str(dump2))
    assert dump.read_text(encoding="utf-8") == dump2.read_text(encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dump.read_text(encoding="utf-8") + "not json\n", encoding="utf-8")
    result = run(str(tmp_path / "third.db"), "import", str(bad))
    assert result.exit_code == 1 and "line" in result.output
    result = run(str(tmp_path / "third.db"), "import", str(bad), "--skip-invalid")
    assert result.exit_code == 0 and "skipped line" in result.output
    # -n names the namespace to import into, as it does for every other command (it was ignored)
    result = run(other, "-n", "copy", "import", str(dump))
    assert result.exit_code == 0 and "into 'copy'" in result.output
    assert "Ann prefers tea" in run(other, "-n", "copy", "list", "--json").output
    result = run(other, "-n", "copy", "import", str(dump), "--into", "elsewhere")
    assert result.exit_code == 1 and "give one" in result.output


def test_stats_and_soul(db):
    run(db, "remember", "x marks the spot")
    assert run(db, "soul", "You are terse.").exit_code == 0
    data = json.loads(run(db, "stats", "--json").output)
    assert data["memory"] == 1 and data["namespaces"] == ["default"]
    assert "You are terse." in run(db, "context", "spot").output


def test_demo_runs_the_real_model(tmp_path):
    result = runner.invoke(app, ["--db", str(tmp_path / "demo.db"), "demo"])
    assert result.exit_code == 0, result.output
    for expected in ("windows extracted", "model calls", "## Identity", "## Memories", "7. The lifecycle",
                     "would merge", "demo finished"):
        assert expected in result.output
    if "superseded:" in result.output:  # the model restated the changed preference (it does on this machine)
        context = result.output.split("6. Context")[1].split("7. The lifecycle")[0]
        lines = [" ".join(x.split()) for x in re.split(r"\n(?=- |## )", context)]
        assert not [x for x in lines if "TypeScript" in x and "Rust" not in x and "(superseded on " not in x], context


def test_add_then_extract_and_status(db, tmp_path):
    result = run(db, "add", "--session", "s", input='{"content": "ok"}\n{"content": "thanks"}\n{"content": "好的"}\n'
                                                    '{"content": "嗯嗯"}\n')
    assert "1 window(s) queued" in result.output
    assert '"queued": 1' in run(db, "status", "--json").output
    result = run(db, "extract")  # a window of thanks: skipped, the model is never loaded
    assert result.exit_code == 0 and "1 skipped" in result.output
    assert '"skipped": 1' in run(db, "status", "--json").output


def test_a_model_that_will_not_load_fails_the_window_and_the_command(db, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHMEM_MODEL_PATH", str(tmp_path / "missing.gguf"))
    lines = "".join(json.dumps({"content": f"I live in Oslo and I love tea, note {i}"}) + "\n" for i in range(4))
    assert run(db, "add", "--session", "s", input=lines).exit_code == 0  # adding never loads the model
    result = run(db, "extract")
    assert result.exit_code == 1 and "1 failed" in result.output and "missing.gguf" in result.output
    assert "Traceback" not in result.output
    status = json.loads(run(db, "status", "--json").output)
    assert status["failed"] == 1 and "missing.gguf" in status["last_error"]
    result = run(db, "extract")  # nothing new to do: exit 0, with a reminder
    assert result.exit_code == 0 and "failed earlier" in result.output


def test_lifecycle_commands(db):
    pinned = json.loads(run(db, "remember", "The user's blood type is O negative", "--importance", "0.05",
                            "--pinned", "--json").output)
    low = json.loads(run(db, "remember", "The lift on level 3 was slow once", "--importance", "0.05", "--json").output)
    assert pinned["pinned"] is True
    result = run(db, "maintain", "--dry-run", "--now", "2099-01-01")
    assert result.exit_code == 0, result.output
    assert "would change" in result.output and "expire" in result.output and low["id"] in result.output
    result = run(db, "explain", low["id"])
    assert result.exit_code == 0 and "expires on" in result.output and "0.05 < 0.1" in result.output
    result = run(db, "maintain", "--now", "2099-01-01", "--json")
    runs = json.loads(result.output)
    assert runs[0]["expired"] == 1 and runs[0]["actions"][0]["id"] == low["id"] and not runs[0]["dry_run"]
    history = run(db, "maintain", "--history")
    assert history.exit_code == 0 and "maintenance runs" in history.output and runs[0]["id"] in history.output
    assert "archived" in run(db, "explain", low["id"]).output
    result = run(db, "recall", "lift level 3", "--include-archived", "--json")
    assert low["id"] in result.output
    bad = run(db, "maintain", "--cap", "-1")
    assert bad.exit_code == 1 and "-1" in bad.output and "Traceback" not in bad.output
    assert run(db, "explain", "mem_missing").exit_code == 1


def test_forget_a_whole_namespace_needs_yes(db):
    run(db, "-n", "tenant-x", "remember", "Bea sails near Kiel")
    result = run(db, "forget", "--namespace", "tenant-x")
    assert result.exit_code == 1 and "--yes" in result.output
    result = run(db, "forget", "--namespace", "tenant-x", "--yes")
    assert result.exit_code == 0 and "deleted namespace 'tenant-x'" in result.output
    assert "tenant-x" not in run(db, "stats", "--json").output
    again = run(db, "forget", "--namespace", "tenant-x", "--yes")  # gone: deleting it again deletes nothing
    assert again.exit_code == 0 and "0 record(s)" in again.output


def test_reembed_errors_are_one_line(db):
    run(db, "remember", "Bea sails near Kiel")
    same = run(db, "reembed", "--to", "use")
    assert same.exit_code == 1 and "already embedded with use-multilingual-v3" in same.output
    unknown = run(db, "reembed", "--to", "word2vec")
    assert unknown.exit_code == 1 and "unknown embedder 'word2vec'" in unknown.output
    assert "Traceback" not in same.output + unknown.output
