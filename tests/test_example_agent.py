"""examples/remembering_agent.py as a user runs it: two processes, offline, the real local
model; the second run's memory holds what the first was told."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "remembering_agent.py"


def run(tmp_path, *args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLE), "--db", str(tmp_path / "agent.db"), "--max-tokens", "32",
                           *args], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_agent_remembers_across_runs(tmp_path):
    first = run(tmp_path, "Hi, I'm Ana. I'm allergic to peanuts. Please remember that.")
    assert first.strip()  # the model answered
    second = run(tmp_path, "--show-context", "What am I allergic to?")
    context, reply = second.split("\n---\n", 1)
    assert "allergic to peanuts" in context  # the first run's turn, recalled in a new process
    assert "## Notes" in context and "Please remember that" in context  # the LangGraph store's note
    assert reply.strip()
