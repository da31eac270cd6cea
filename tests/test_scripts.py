"""The memory scripts under tests/scripts pass on the recorded model replies; the runner fails
loudly on a broken expectation or a broken script."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from graphmem.cli import app

SCRIPTS = Path(__file__).parent / "scripts"
runner = CliRunner()


def test_every_memory_script_passes():
    assert len(list(SCRIPTS.glob("*.yaml"))) >= 10
    result = runner.invoke(app, ["scripts", "run", str(SCRIPTS)])
    assert result.exit_code == 0, result.output
    assert "0 failed" in result.output and "FAIL" not in result.output


def test_a_failing_expectation_exits_non_zero(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "name: impossible\nsteps:\n  - count: {kind: memory, equals: 3}\n", encoding="utf-8")
    result = runner.invoke(app, ["scripts", "run", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 1 and "FAIL" in result.output and "1 failed" in result.output


def test_a_broken_script_is_a_clear_error(tmp_path):
    (tmp_path / "broken.yaml").write_text("name: x\nsteps:\n  - wander: somewhere\n", encoding="utf-8")
    result = runner.invoke(app, ["scripts", "run", str(tmp_path / "broken.yaml")])
    assert result.exit_code == 1 and "not a valid memory script" in result.output


def test_an_unrecorded_window_is_an_error_not_a_guess(tmp_path):
    (tmp_path / "new.yaml").write_text(
        "name: unrecorded\nsteps:\n  - session: s\n    at: 2026-01-01T00:00:00Z\n    messages:\n"
        "      - [Zed, \"My favourite colour is teal and I live in Perth.\"]\n", encoding="utf-8")
    result = runner.invoke(app, ["scripts", "run", str(tmp_path / "new.yaml"), "--recordings",
                                 str(SCRIPTS / "recordings.json")])
    assert result.exit_code == 1 and "no recorded model reply" in result.output
